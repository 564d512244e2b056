-- An incident's thread list saved without a fresh revision (by a writer that does not name the
-- column, as a version before 20261209100000_incident_revision does) leaves it empty, so every
-- fold reads that list again instead of taking a list it remembers for current
-- (lib/db/records/incidents.ts knownIncidentThreads). SQLite has one writing process; this keeps
-- it alike with PostgreSQL, where instances of two versions share a database during an upgrade.
CREATE TRIGGER "Incident_threads_saved_without_revision" AFTER UPDATE OF threads ON "Incident"
FOR EACH ROW WHEN NEW.revision = OLD.revision AND NEW.revision != '' AND NEW.threads IS NOT OLD.threads
BEGIN
  UPDATE "Incident" SET revision = '' WHERE id = NEW.id;
END;
