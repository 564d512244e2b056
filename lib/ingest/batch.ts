/**
 * normalizeBatch: one request's items → normalized lines + rejected items (by index).
 * Good items are kept when others are rejected; nothing here is I/O.
 */
import { boundItem, boundPayload, boundPayloadJson, cutString, storedTimeError, wellFormed } from "./bound";
import { normalizeCanonical } from "./canonical";
import { normalizeClaude } from "./claude";
import { normalizeCodexAppServer } from "./codex-app-server";
import { normalizeCodexExec } from "./codex-exec";
import type { LimitSnapshot } from "./limit-snapshots";
import { MAX_ID_CHARS, MAX_NAME_CHARS, MAX_STORED_INT, MAX_TITLE_CHARS } from "./limits";
import { maskEvent, maskPayload } from "./mask";
import { InvalidLine, unreadable } from "./native";
import { normalizeOtlp } from "./otlp";
import type { BatchContext, BatchResult, LineFormat, NormalizedEvent, NormalizedLine, RejectedItem } from "./types";

export function normalizeCanonicalBatch(items: unknown[], ctx: BatchContext): BatchResult {
  const lines: NormalizedLine[] = [];
  const rejected: RejectedItem[] = [];
  let threadId = ctx.threadId ?? null;
  let turnId = ctx.turnId ?? null;
  items.forEach((item, index) => {
    if (item instanceof InvalidLine) return; // already reported by parseBody
    let result: ReturnType<typeof normalizeCanonical>;
    try {
      result = normalizeCanonical(item, ctx.receivedAt, index);
    } catch (error) {
      result = { ok: false, error: unreadable(error) };
    }
    if (!result.ok) {
      rejected.push({ index, error: result.error });
      return;
    }
    const line = result.line;
    const event = line.event;
    if (event) {
      if (event.threadId !== threadId) turnId = null;
      threadId = event.threadId;
      if (event.turnId) turnId = event.turnId;
    }
    lines.push(line);
  });
  return { lines, rejected, context: { threadId, turnId } };
}

function adapt(format: LineFormat, items: unknown[], ctx: BatchContext): BatchResult {
  switch (format) {
    case "canonical":
      return normalizeCanonicalBatch(items, ctx);
    case "codex":
      return normalizeCodexAppServer(items, ctx);
    case "codex-exec":
      return normalizeCodexExec(items, ctx);
    case "claude":
      return normalizeClaude(items, ctx);
    case "otlp":
      return normalizeOtlp(items, ctx);
  }
}

/**
 * Every format goes through the same bounds: a line nested too deep is rejected before an
 * adapter walks it, over-long strings are cut, an over-long id rejects its line, names are cut,
 * and large raw payloads and error details are kept as marked previews. Credentials are masked
 * (mask.ts) after the adapters derived each line's key from the line as received, and before a
 * payload is cut to its preview, so no preview keeps a secret.
 */
export function normalizeBatch(format: LineFormat, items: unknown[], ctx: BatchContext): BatchResult {
  const rejected: RejectedItem[] = [];
  const bounded = items.map((item, index) => {
    if (item instanceof InvalidLine) return item;
    const result = boundItem(item);
    if (result.ok) return result.item;
    rejected.push({ index, error: result.error });
    return new InvalidLine(result.error);
  });
  const result = adapt(format, bounded, ctx);
  const lines: NormalizedLine[] = [];
  for (const line of result.lines) {
    const unstorable = (line.event ? overlongId(line.event) ?? outOfRangeInt(line.event) : null) ?? unstorableLimit(line);
    if (unstorable) {
      rejected.push({ index: line.index, error: unstorable });
      continue;
    }
    if (line.event) {
      boundEvent(line.event);
      line.event = maskEvent(line.event);
    }
    for (const limit of line.limits ?? []) boundLimit(limit);
    const raw = boundPayloadJson(maskPayload(line.raw));
    line.raw = raw.value;
    line.rawJson = raw.json;
    lines.push(line);
  }
  rejected.push(...result.rejected);
  rejected.sort((a, b) => a.index - b.index);
  return { lines, rejected, context: result.context };
}

function overlongId(event: NormalizedEvent): string | null {
  for (const field of ["threadId", "turnId", "parentThreadId"] as const) {
    const value = event[field];
    if (typeof value === "string" && value.length > MAX_ID_CHARS) return `${field}: expected an id of at most ${MAX_ID_CHARS} characters`;
  }
  return null;
}

/** Every format's integers, after its adapter read them: a number no store's column holds refuses its line. */
function outOfRangeInt(event: NormalizedEvent): string | null {
  const fields = { attempt: event.attempt, maxAttempts: event.maxAttempts, delayMs: event.delayMs, progressCount: event.progressCount, "error.httpStatus": event.error?.httpStatus };
  for (const [field, value] of Object.entries(fields)) {
    const error = typeof value === "number" ? storedIntError(value) : null;
    if (error) return `${field}: ${error}`;
  }
  return null;
}

function storedIntError(value: number): string | null {
  return Math.abs(Math.round(value)) > MAX_STORED_INT ? `expected a number between ${-MAX_STORED_INT} and ${MAX_STORED_INT}` : null;
}

/**
 * Every format's limit snapshots, after its adapter read them (native reset times are seconds
 * times 1000): a window length or reset time no store holds refuses its line. Named as
 * `limit.updated` names them; a snapshot read from another line also names its window.
 */
function unstorableLimit(line: NormalizedLine): string | null {
  const ownLine = line.format === "canonical" && (line.event === null || line.event.type === "limit.updated");
  for (const limit of line.limits ?? []) {
    const fields = {
      windowMinutes: limit.windowMinutes === null ? null : storedIntError(limit.windowMinutes),
      resetsAt: limit.resetAt === null ? null : storedTimeError(limit.resetAt),
    };
    for (const [field, error] of Object.entries(fields)) {
      if (error) return ownLine ? `${field}: ${error}` : `${field} of the "${cutString(limit.window, MAX_NAME_CHARS)}" window: ${error}`;
    }
  }
  return null;
}

function boundLimit(limit: LimitSnapshot) {
  limit.provider = wellFormed(cutString(limit.provider, MAX_NAME_CHARS));
  limit.window = wellFormed(cutString(limit.window, MAX_NAME_CHARS));
  if (limit.account !== null) limit.account = wellFormed(cutString(limit.account, MAX_NAME_CHARS));
  if (limit.reachedType) limit.reachedType = cutString(limit.reachedType, MAX_NAME_CHARS);
}

function boundEvent(event: NormalizedEvent) {
  for (const field of ["threadId", "turnId", "parentThreadId"] as const) {
    const value = event[field];
    if (typeof value === "string") event[field] = wellFormed(value);
  }
  // Names become ids too (an incident's scope is its provider and model): well-formed as well.
  for (const field of ["agent", "provider", "model"] as const) {
    const value = event[field];
    if (typeof value === "string") event[field] = wellFormed(cutString(value, MAX_NAME_CHARS));
  }
  if (typeof event.title === "string") event.title = wellFormed(cutString(event.title, MAX_TITLE_CHARS));
  if (event.error) {
    if (typeof event.error.code === "string") event.error.code = wellFormed(cutString(event.error.code, MAX_NAME_CHARS));
    if (typeof event.error.message === "string") event.error.message = wellFormed(event.error.message);
    if (event.error.details !== undefined) event.error.details = boundPayload(event.error.details);
  }
}

/**
 * Lines that carry nothing the radar uses (no event, or an event of no thread: a JSON-RPC
 * response, a notification before any thread, `{}`) are counted, never stored. A line that
 * reports usage windows is kept even without a thread.
 */
export function withoutIgnored(lines: NormalizedLine[]): { lines: NormalizedLine[]; ignored: number } {
  const kept = lines.filter((line) => (line.event !== null && line.event.threadId !== "") || (line.limits?.length ?? 0) > 0);
  return { lines: kept, ignored: lines.length - kept.length };
}
