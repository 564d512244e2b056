/**
 * Idempotency keys for lines that carry no `id` of their own.
 *
 * key = `<format>@<time>:` + sha256 hex of the NUL-joined parts
 *   [format, threadId (resolved thread of the line, "" if none), stable JSON of the line
 *    (keys sorted recursively, without the `{at, message}` wrapper), the line's time]
 * where the time is the wrapped `at` as epoch ms, "" when the line carries a time of its own
 * (canonical `at`, Codex `emittedAtMs`: already part of the line), and the receive time when it
 * carries none. So re-sending or re-importing a line with a time yields the same key however the
 * producer split its batches, and two identical timeless lines are distinct events when they
 * arrive in different requests, the same event within one request.
 *
 * `<time>` is the line's own time (or its receive time when it has none, already in the hash),
 * read from the line alone, as 9 base-36 digits: keys then sort by time, so the unique index of
 * keys grows at its right edge. A hash alone lands every insert on a random page of that index:
 * each event dirtied a page of its own, which the commit writes out, and the cost grew with the
 * table (scripts/bench-keys.ts). Lines stored before keys had a time hold their key in the
 * earlier form, `<format>:` + the same hash (`earlierKey`); looking a key up looks for both.
 */
import { createHash } from "node:crypto";
import { parseEventTime } from "./time";

export function stableJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    const s = JSON.stringify(value);
    return s === undefined ? "null" : s;
  }
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(obj[k])}`).join(",")}}`;
}

export interface KeyParts {
  format: string;
  threadId: string | null;
  line: unknown;
  /** The wrapped `at`, or the receive time of a line without any time of its own; null when the line carries its time. */
  at: number | null;
}

export function keyMaterial(parts: KeyParts): string {
  return [parts.format, parts.threadId ?? "", stableJson(parts.line), parts.at ?? ""].join("\u0000");
}

const TIME_DIGITS = 9;
const LATEST_KEY_TIME = 36 ** TIME_DIGITS - 1;
const DERIVED = /^([^@:]+)@[0-9a-z]{9}:([0-9a-f]{64})$/;

/** `time`: epoch ms the line itself says (see above); a line that says none usable is keyed at 0. */
export function deriveKey(material: string, format: string, time: number): string {
  // The trailing "\u00000" keeps the keys of lines stored before keys stopped counting
  // identical lines within a batch (the first of them was occurrence 0).
  const hash = createHash("sha256").update(`${material}\u00000`).digest("hex");
  const ms = Number.isFinite(time) ? Math.min(LATEST_KEY_TIME, Math.max(0, Math.floor(time))) : 0;
  return `${format}@${ms.toString(36).padStart(TIME_DIGITS, "0")}:${hash}`;
}

/**
 * A time a line states, for its key: read as parseEventTime reads it, but without the bound
 * against the receive time, so the same line gives the same time whenever it arrives; 0 when it
 * states none usable.
 */
export function statedTime(value: unknown): number {
  if (value === undefined || value === null) return 0;
  const t = parseEventTime(value, Number.POSITIVE_INFINITY);
  return t.ok ? t.at : 0;
}

/** The form a derived key had before keys carried a time; null for a key of another form (a line's own `id`). */
export function earlierKey(key: string): string | null {
  const match = DERIVED.exec(key);
  return match ? `${match[1]}:${match[2]}` : null;
}

/**
 * What a store looks up for a batch's keys: each key, and the earlier form of each derived one.
 * `stored` maps what it found back to the batch's keys.
 */
export function keyLookups(keys: readonly string[]): { lookup: string[]; stored(found: Iterable<string>): Set<string> } {
  const byEarlier = new Map<string, string>();
  for (const key of keys) {
    const earlier = earlierKey(key);
    if (earlier !== null) byEarlier.set(earlier, key);
  }
  return {
    lookup: [...keys, ...byEarlier.keys()],
    stored(found) {
      const stored = new Set<string>();
      for (const key of found) stored.add(byEarlier.get(key) ?? key);
      return stored;
    },
  };
}
