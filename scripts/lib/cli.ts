import { checkDatabaseUrl } from "../../lib/db/config";
import { openStore } from "../../lib/db/open-store";

/** What the shell commands (npm run keys / users) share: failing with one clear line, and a plain table. */
export function fail(command: string, message: string): never {
  process.stderr.write(`${command}: ${message}\n`);
  process.exit(1);
}

export function table(rows: Record<string, string>[]): string {
  if (rows.length === 0) return "(none)";
  const columns = Object.keys(rows[0]);
  const width = (c: string) => Math.max(c.length, ...rows.map((r) => r[c].length));
  const line = (cells: Record<string, string>) => columns.map((c) => cells[c].padEnd(width(c))).join("  ").trimEnd();
  return [line(Object.fromEntries(columns.map((c) => [c, c]))), ...rows.map(line)].join("\n");
}

export const when = (ms: number | null) => (ms === null ? "—" : new Date(ms).toISOString().replace(/\.\d+Z$/, "Z"));

/**
 * Refuses, before anything is written, a DATABASE_URL that names no usable store (one clear
 * line), and opens the store as the server's start does: a database no server has started on yet
 * gets its schema first.
 */
export async function requireServedStore(command: string): Promise<void> {
  try {
    checkDatabaseUrl();
    await openStore();
  } catch (error) {
    fail(command, error instanceof Error ? error.message : String(error));
  }
}
