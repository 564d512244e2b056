-- The board's free-text filter (`q`) matches a part of five columns, ASCII case folded as SQLite's
-- LIKE does (lib/db/postgres/sql.ts asciiLower): without an index every search reads every
-- thread. A trigram index on the same five expressions lets PostgreSQL find the few that match.
-- pg_trgm ships with PostgreSQL and is a trusted extension, but creating it needs CREATE on the
-- database, which a role granted only its schema lacks, and some hosted servers allow extensions
-- only from a list. The index is only a speed-up, so without the extension the start goes on
-- (a NOTICE says why) and searches read every thread; an extension already installed in another
-- schema is used where it is.
DO $$
DECLARE
  trgm_schema name;
BEGIN
  SELECT n.nspname INTO trgm_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  IF trgm_schema IS NULL THEN
    BEGIN
      CREATE EXTENSION pg_trgm;
    EXCEPTION WHEN OTHERS THEN
      RAISE NOTICE 'pg_trgm could not be created (%): the board''s text search works without its index, reading every thread', SQLERRM;
      RETURN;
    END;
    SELECT n.nspname INTO trgm_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  END IF;
  EXECUTE format(
    'CREATE INDEX "Thread_search_idx" ON "Thread" USING gin ('
    || 'translate("externalId", %1$L, %2$L) %3$I.gin_trgm_ops, '
    || 'translate("title", %1$L, %2$L) %3$I.gin_trgm_ops, '
    || 'translate("lastErrorMessage", %1$L, %2$L) %3$I.gin_trgm_ops, '
    || 'translate("agent", %1$L, %2$L) %3$I.gin_trgm_ops, '
    || 'translate("model", %1$L, %2$L) %3$I.gin_trgm_ops)',
    'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz', trgm_schema);
END
$$;
