import { threadsByExternalId } from "@/lib/db/threads";

export type ResolvedThread =
  | { ok: true; key: number }
  | { ok: false; status: 404 | 409; error: string; candidates?: { source: string; sourceId: string }[] };

/**
 * A thread's public id is the agent's own id; two sources may report the same id, so
 * `?source=` (id or name) picks one. Without it an ambiguous id is a 409 naming the sources.
 */
export async function resolveThread(id: string, source: string | null): Promise<ResolvedThread> {
  const rows = (await threadsByExternalId(id)).filter((row) => !source || row.sourceId === source || row.source.name === source);
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
