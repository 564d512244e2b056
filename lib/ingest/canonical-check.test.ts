import { describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../retry/types";
import { canonicalEventSchema, normalizeCanonical } from "./canonical";
import { isPlainCanonicalEvent } from "./canonical-check";
import { MAX_HEADERS } from "./limits";

/**
 * The hand-written check answers only what the zod schema answers: on a corpus of good and bad
 * events (every field drawn from valid values, boundaries and wrong types), whatever the check
 * accepts the schema accepts with the same fields, and whatever either rejects is rejected with
 * the schema's message.
 */
const NOW = Date.UTC(2026, 10, 29, 17, 0, 0);
const long = (n: number) => "x".repeat(n);
const headers = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-H${i}`, "v"]));

/** Candidate values per field, the first three valid; `undefined` leaves the field out. */
const FIELDS: Record<string, unknown[]> = {
  id: [undefined, undefined, "e1", "", long(200), long(201), 7, null],
  threadId: ["t1", "t1", "t1", "", long(200), long(201), 3, null, undefined],
  type: [...EVENT_TYPES, "retry", "unknown", 5, undefined, null],
  turnId: [undefined, "u1", null, "", long(201), 1],
  parentThreadId: [undefined, undefined, "p1", null, "", 2],
  at: [undefined, NOW - 1000, new Date(NOW).toISOString(), "yesterday", true, 1795971676, null, Infinity, NaN],
  agent: [undefined, "codex", null, "", long(200), long(201), 1],
  provider: [undefined, "openai", null, long(201), ["p"]],
  model: [undefined, "gpt-5.5", null, {}, long(200)],
  title: [undefined, "A title", null, long(1000), long(1001)],
  policy: [undefined, undefined, "standard", "", null, long(201), 3, { maxAttempts: 3 }, []],
  attempt: [undefined, 0, 1, 2, -1, 1.5, "2", null, 2 ** 53],
  maxAttempts: [undefined, 1, 5, 0, null, -3, 2.5],
  delayMs: [undefined, 0, 1500, 2.5, -5, "5s", null, Infinity],
  willRetry: [undefined, true, false, null, "yes", 0],
  attemptsMade: [undefined, 1, 5, 0, null, 2.5, "5"],
  retryMs: [undefined, 0, 11517, 2.5, -1, null, "11s"],
  progressCount: [undefined, 1, 3, 0, null, 1.5],
  error: [
    undefined,
    null,
    {},
    { httpStatus: 429, code: "rate_limit_exceeded", message: "Please try again in 2s." },
    { httpStatus: 99 },
    { httpStatus: 600 },
    { httpStatus: 429.5 },
    { httpStatus: "429" },
    { httpStatus: null, code: null, message: null, retryAfter: null, headers: null },
    { code: "" },
    { code: long(201) },
    { code: { ResponseStreamDisconnected: { httpStatusCode: 502 } } },
    { code: 5 },
    { message: 5 },
    { retryAfter: "2" },
    { retryAfter: 2 },
    { retryAfter: true },
    { headers: { "Retry-After": "2", "X-RateLimit-Remaining-Requests": "0" } },
    { headers: { "retry-after": 2 } },
    { headers: headers(MAX_HEADERS) },
    { headers: headers(MAX_HEADERS + 1) },
    { headers: ["a"] },
    { details: { any: ["thing"] }, extra: 1 },
    "boom",
    [],
  ],
  extra: [undefined, undefined, "kept in raw", { nested: true }],
};

/** mulberry32: deterministic, so a failure reproduces, and free of the low-bit patterns of a plain LCG. */
function generator(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * n);
  };
}

/** A valid event with up to three fields drawn from every candidate, good or bad. */
function randomItem(next: (n: number) => number): Record<string, unknown> {
  const fields = Object.entries(FIELDS);
  const draws = fields.map(([, values]) => values[next(3)]);
  for (let k = next(4); k > 0; k--) {
    const i = next(fields.length);
    draws[i] = fields[i][1][next(fields[i][1].length)];
  }
  const item: Record<string, unknown> = {};
  fields.forEach(([field], i) => {
    if (draws[i] !== undefined) item[field] = draws[i];
  });
  return item;
}

const KNOWN = Object.keys(canonicalEventSchema.shape);
const known = (value: Record<string, unknown>) => Object.fromEntries(KNOWN.filter((k) => value[k] !== undefined).map((k) => [k, value[k]]));

describe("the canonical hot-path check", () => {
  const next = generator(14);
  const corpus = Array.from({ length: 6_000 }, () => randomItem(next));

  it("accepts only what the schema accepts, with the same fields", () => {
    let accepted = 0;
    for (const item of corpus) {
      if (!isPlainCanonicalEvent(item)) continue;
      const parsed = canonicalEventSchema.safeParse(item);
      accepted++;
      expect(parsed.success, JSON.stringify(item)).toBe(true);
      expect(known(item), JSON.stringify(item)).toEqual(known(parsed.data!));
    }
    // The check must carry the common case, not just pass everything to the schema.
    expect(accepted).toBeGreaterThan(corpus.length / 4);
  });

  it("takes the common event whole: what a relay sends in a batch", () => {
    for (const type of EVENT_TYPES) expect(isPlainCanonicalEvent({ id: "e1", threadId: "t1", turnId: "u1", type, at: NOW, agent: "codex", provider: "openai", model: "gpt-5.5" })).toBe(true);
    expect(
      isPlainCanonicalEvent({ threadId: "t1", type: "retry", attempt: 2, maxAttempts: 5, error: { httpStatus: 429, code: "rate_limit_exceeded", message: "Please try again in 2s." } }),
    ).toBe(true);
  });

  it("rejects, with the schema's message, every event the schema rejects", () => {
    for (const item of corpus) {
      const parsed = canonicalEventSchema.safeParse(item);
      if (parsed.success || item.type === "limit.updated") continue;
      const result = normalizeCanonical(item, NOW);
      expect(result.ok, JSON.stringify(item)).toBe(false);
      const paths = new Set(parsed.error.issues.map((issue) => issue.path.map(String).join(".")));
      for (const path of paths) expect(result.ok ? "" : result.error, JSON.stringify(item)).toContain(path ? `${path}: ` : "");
    }
  });
});
