-- An incident's thread list saved without a fresh revision (by an instance that does not name the
-- column, as one of a version before 20261209100000_incident_revision does during a rolling
-- upgrade) leaves it empty, so every fold reads that list again instead of taking a list it
-- remembers for current (lib/db/records/incidents.ts knownIncidentThreads).
CREATE FUNCTION "incident_threads_saved_without_revision"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- The revision first: a save of this version always changes it, and the lists are long.
  IF NEW.revision = OLD.revision AND NEW.revision <> '' THEN
    IF NEW.threads IS DISTINCT FROM OLD.threads THEN
      NEW.revision := '';
    END IF;
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER "Incident_threads_saved_without_revision" BEFORE UPDATE ON "Incident"
FOR EACH ROW EXECUTE FUNCTION "incident_threads_saved_without_revision"();
