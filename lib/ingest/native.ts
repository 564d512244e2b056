/**
 * The shared loop of the native adapters: unwrap `{at, message}`, resolve the event time,
 * derive the idempotency key, call the adapter's step with the per-batch state.
 */
import { deriveKey, keyMaterial, statedTime } from "./key";
import type { LimitSnapshot } from "./limit-snapshots";
import { parseEventTime } from "./time";
import type { BatchContext, BatchResult, IngestFormat, NormalizedEvent, NormalizedLine, RejectedItem } from "./types";
import { isObject, type JsonObject } from "./util";

/** Placeholder for a body line that was not valid JSON (see body.ts); already in parseBody's `rejected`, skipped here. */
export class InvalidLine {
  constructor(public readonly error: string) {}
}

/** A line an adapter could not read (a bug or a shape nothing foresaw) is rejected alone, never the batch. */
export function unreadable(error: unknown): string {
  return `could not be read: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500);
}

/** Mutable per-batch state: the current thread and turn, plus what an adapter wants to carry. */
export interface NativeState {
  threadId: string | null;
  turnId: string | null;
}

export type StepResult = { event: NormalizedEvent | null; nativeType: string | null; limits?: LimitSnapshot[] } | { error: string };

export interface LineInput {
  msg: JsonObject;
  /** Event time: wrapped `at`, else the adapter's native time, else the receive time. */
  at: number;
  /** The line's idempotency key (already derived; adapters may use it to synthesize ids). */
  key: string;
  index: number;
}

export interface NativeAdapter<S extends NativeState> {
  format: Exclude<IngestFormat, "canonical">;
  initialState(ctx: BatchContext): S;
  /** The thread a line belongs to before it is applied (used in its key). */
  lineThread(msg: JsonObject, state: S): string | null;
  /** Native event time carried by the line (Codex `emittedAtMs`). */
  nativeTime?(msg: JsonObject): unknown;
  step(input: LineInput, state: S): StepResult;
}

/**
 * `{"at": <ISO or epoch ms>, "message": <line>}` — recognised only when the object has exactly
 * these keys (`at` optional) and `message` is an object, so a Claude line's own `message`
 * field is never mistaken for a wrapper.
 */
export function unwrap(item: unknown): { wrapped: boolean; at: unknown; msg: unknown } {
  if (isObject(item) && isObject(item.message) && Object.keys(item).every((k) => k === "at" || k === "message")) {
    return { wrapped: true, at: item.at, msg: item.message };
  }
  return { wrapped: false, at: undefined, msg: item };
}

export function runNative<S extends NativeState>(adapter: NativeAdapter<S>, items: unknown[], ctx: BatchContext): BatchResult {
  const state = adapter.initialState(ctx);
  const lines: NormalizedLine[] = [];
  const rejected: RejectedItem[] = [];
  const receivedAt = ctx.receivedAt;

  items.forEach((item, index) => {
    if (item instanceof InvalidLine) return; // already reported by parseBody
    try {
      const line = normalizeLine(item, index);
      if (line) lines.push(line);
    } catch (error) {
      rejected.push({ index, error: unreadable(error) });
    }
  });

  function normalizeLine(item: unknown, index: number): NormalizedLine | null {
    const { wrapped, at: wrappedAtRaw, msg } = unwrap(item);
    if (!isObject(msg)) {
      rejected.push({ index, error: wrapped ? "message: expected a JSON object" : "expected a JSON object" });
      return null;
    }
    let wrappedAt: number | null = null;
    if (wrapped && wrappedAtRaw !== undefined && wrappedAtRaw !== null) {
      const t = parseEventTime(wrappedAtRaw, receivedAt);
      if (!t.ok) {
        rejected.push({ index, error: `at: ${t.message}` });
        return null;
      }
      wrappedAt = t.at;
    }
    let at = wrappedAt ?? receivedAt;
    const native = wrappedAt === null && adapter.nativeTime ? adapter.nativeTime(msg) : undefined;
    if (native !== undefined && native !== null) {
      const t = parseEventTime(native, receivedAt);
      if (t.ok) at = t.at; // an implausible native time falls back to the receive time
    }
    // A line with no time at all is keyed by its receive time (see key.ts).
    const keyTime = wrappedAt ?? (native === undefined || native === null ? receivedAt : null);
    const key = deriveKey(keyMaterial({ format: adapter.format, threadId: adapter.lineThread(msg, state), line: msg, at: keyTime }), adapter.format, keyTime ?? statedTime(native));
    const result = adapter.step({ msg, at, key, index }, state);
    if ("error" in result) {
      rejected.push({ index, error: result.error });
      return null;
    }
    const line: NormalizedLine = {
      index,
      event: result.event,
      nativeType: result.nativeType,
      format: adapter.format,
      idempotencyKey: key,
      raw: item,
      receivedAt,
    };
    if (result.limits?.length) line.limits = result.limits;
    return line;
  }

  return { lines, rejected, context: { threadId: state.threadId, turnId: state.turnId } };
}
