import type { DirectiveView } from "@/lib/wire/types";
import { toView, type DirectiveRow } from "../records/directives";
import { ms, rowsOf } from "./sql";

/** The directive reads of lib/db/directives.ts on PostgreSQL (the claim is directive-claim.ts; the writes are the write path's). */
const OPEN_FOR_THREADS = `SELECT d.id, t."externalId", d."turnId", d.kind, d.reason, ${ms(`d."createdAt"`)}, d.state, d."threadId"
  FROM "Directive" d JOIN "Thread" t ON t.id = d."threadId"
  WHERE d."sourceId" = ? AND d.state IN ('pending', 'delivered') AND d."threadId" = ANY(?::int[]) ORDER BY d."createdAt", d.id COLLATE "C"`;

export async function openDirectivesForThreads(sourceId: string, threadIds: number[]): Promise<DirectiveView[]> {
  if (threadIds.length === 0) return [];
  return (await rowsOf<DirectiveRow>(OPEN_FOR_THREADS, [sourceId, threadIds])).map(toView);
}
