/**
 * Whether `error` is SQLite's SQLITE_BUSY or one of its extended codes (better-sqlite3 names the
 * extended one, SQLITE_BUSY_SNAPSHOT say): another connection holds a lock this one needs.
 */
export function isSqliteBusy(error: unknown): boolean {
  return String((error as { code?: unknown } | null)?.code).startsWith("SQLITE_BUSY");
}
