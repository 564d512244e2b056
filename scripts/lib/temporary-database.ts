import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * For the in-process profiles: points DATABASE_URL at a fresh SQLite file, removed when the
 * process exits, unless DATABASE_URL already names one (a database to profile on). Call it before
 * importing anything that opens the database.
 */
export function useTemporaryDatabase(): void {
  if (process.env.DATABASE_URL) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-profile-"));
  process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  process.env.DATABASE_URL = `file:${path.join(dir, "radar.db")}`;
}
