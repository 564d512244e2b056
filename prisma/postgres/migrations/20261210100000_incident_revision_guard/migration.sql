-- An incident's thread list saved without a fresh revision (by an instance that does not name the
-- column, as one of a version before 20261209100000_incident_revision does during a rolling
-- upgrade) leaves it empty, so every fold reads that list again instead of taking a list it
-- remembers for current (lib/db/records/incidents.ts knownIncidentThreads). Only updates that set
-- `threads` and keep a revision call it: a save of this version always changes the revision, and
-- the lists are long to compare.
CREATE FUNCTION "incident_threads_saved_without_revision"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.threads IS DISTINCT FROM OLD.threads THEN
    NEW.revision := '';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER "Incident_threads_saved_without_revision" BEFORE UPDATE OF threads ON "Incident"
FOR EACH ROW WHEN (NEW.revision = OLD.revision AND NEW.revision <> '')
EXECUTE FUNCTION "incident_threads_saved_without_revision"();
