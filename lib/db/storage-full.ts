/**
 * The disk (or the database's page limit) is full. SQLite rolls the failing statement back and
 * the unit of work rolls back the rest (unit-of-work.ts), so nothing half-written remains: the
 * caller may simply try again once there is room.
 */
export function isStorageFull(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "SQLITE_FULL";
}
