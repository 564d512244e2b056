import { openDirectivesForThreads } from "@/lib/db/directives";
import type { SourceRecord } from "@/lib/db/sources";
import { BodyParseError, parseBody, TooManyItemsError } from "@/lib/ingest/body";
import { nulError, nulPath } from "@/lib/ingest/bound";
import { normalizeBatch, withoutIgnored } from "@/lib/ingest";
import { MAX_INGEST_BODY_BYTES, MAX_REJECTED_ECHO } from "@/lib/ingest/limits";
import type { IngestFormat } from "@/lib/ingest/types";
import type { IngestResponse } from "@/lib/wire/types";
import { problem } from "./http";
import { ingestLines } from "./pipeline";
import { admitIngest } from "./quota";
import { shared } from "@/lib/process-state";

/**
 * Streams that carry no ids on every line (codex exec, Claude) are often posted a few lines
 * at a time; remember each source's current thread/turn per format between requests.
 */
const streamContext = shared("streamContext", (): Map<string, { threadId: string | null; turnId: string | null }> => new Map());

/** One ingestion request of any format, its body already read: parse → normalize → reduce/persist → respond. */
export async function handleIngest(request: Request, text: string, source: SourceRecord, format: IngestFormat, receivedAt: number): Promise<Response> {
  let parsed: ReturnType<typeof parseBody>;
  try {
    parsed = parseBody(text, request.headers.get("content-type"));
  } catch (error) {
    if (error instanceof BodyParseError) return problem(400, "Unparseable body", error.message);
    if (error instanceof TooManyItemsError) return problem(413, "Too many items", error.message);
    throw error;
  }
  const url = new URL(request.url);
  if (nulPath(url.searchParams.get("threadId")) !== null) return problem(400, "Invalid query", nulError("threadId"));
  const refused = await admitIngest(source, parsed.items.length, receivedAt);
  if (refused) return refused;
  const contextKey = `${source.id}\0${format}`;
  const remembered = streamContext.get(contextKey);
  const named = url.searchParams.get("threadId");
  const threadId = named ?? remembered?.threadId ?? null;
  const turnId = threadId === remembered?.threadId ? (remembered?.turnId ?? null) : null;
  const batch = normalizeBatch(format, parsed.items, { receivedAt, threadId, turnId });
  if (format === "codex-exec" || format === "claude") streamContext.set(contextKey, batch.context);
  const { lines, ignored } = withoutIgnored(batch.lines);
  const outcome = await ingestLines(source, lines, receivedAt);
  const rejected = [...parsed.rejected, ...batch.rejected].sort((a, b) => a.index - b.index);
  const body: IngestResponse = {
    accepted: outcome.accepted,
    duplicates: outcome.duplicates,
    ignored,
    // A flood of bad lines must not become a flood of output: the first ones say what is wrong.
    rejected: rejected.slice(0, MAX_REJECTED_ECHO),
    rejectedOmitted: Math.max(0, rejected.length - MAX_REJECTED_ECHO),
    directives: await openDirectivesForThreads(source.id, outcome.threadIds),
  };
  return Response.json(body, { status: outcome.accepted === 0 && rejected.length > 0 ? 422 : 200 });
}

/** How ingestion routes read their body: the raw text (JSON, a JSON array or NDJSON), within the ingest limit. */
export const INGEST_BODY = { maxBytes: MAX_INGEST_BODY_BYTES, hint: "send smaller batches" };
