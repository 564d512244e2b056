import { threadsByExternalId } from "@/lib/db/threads";

export type ResolvedThread =
  | { ok: true; key: number }
  | { ok: false; status: 404 | 409; error: string; candidates?: { source: string; sourceId: string }[] };

/**
 * A thread's public id is the agent's own id; two sources may report the same id, so
 * `?source=` (id or name) picks one. Without it an ambiguous id is a 409 naming the sources.
 * Threads joined to another are not candidates then, unless every candidate is.
 */
export async function resolveThread(id: string, source: string | null): Promise<ResolvedThread> {
  const found = (await threadsByExternalId(id)).filter((row) => !source || row.sourceId === source || row.source.name === source);
  // A thread joined to another path's thread of the same id (lib/db/thread-join.ts) is shown by
  // that one: without ?source=, the id names the thread the board shows.
  const shown = found.filter((row) => row.joinedTo === null);
  const rows = !source && shown.length > 0 ? shown : found;
  if (rows.length === 1) return { ok: true, key: rows[0].id };
  if (rows.length === 0) {
    return { ok: false, status: 404, error: source ? `No thread "${id}" from source "${source}".` : `No thread "${id}".` };
  }
  return {
    ok: false,
    status: 409,
    error: `Thread id "${id}" is reported by ${rows.length} sources; add ?source=<id> to choose one.`,
    candidates: rows.map((row) => ({ source: row.source.name, sourceId: row.sourceId })),
  };
}
