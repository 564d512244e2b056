/**
 * The disk (or the database's page limit) is full: SQLITE_FULL on SQLite, SQLSTATE 53100
 * (disk_full) on PostgreSQL. Either store rolls the failing statement back and the unit of work
 * rolls back the rest (unit-of-work.ts), so nothing half-written remains: the caller may simply
 * try again once there is room.
 */
const FULL = new Set(["SQLITE_FULL", "53100"]);

export function isStorageFull(error: unknown): boolean {
  return typeof error === "object" && error !== null && FULL.has((error as { code?: unknown }).code as string);
}
