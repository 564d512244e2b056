-- The board's free-text filter (`q`) matches a part of five columns, ASCII case folded as SQLite's
-- LIKE does (lib/db/postgres/sql.ts asciiLower): without an index every search reads every
-- thread. A trigram index on the same five expressions lets PostgreSQL find the few that match.
-- pg_trgm ships with PostgreSQL (Debian's postgresql package included) and is a trusted
-- extension: the database's owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX "Thread_search_idx" ON "Thread" USING gin (translate("externalId", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') gin_trgm_ops, translate("title", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') gin_trgm_ops, translate("lastErrorMessage", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') gin_trgm_ops, translate("agent", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') gin_trgm_ops, translate("model", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') gin_trgm_ops);
