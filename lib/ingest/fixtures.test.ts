/** Every shared real-client capture → capture.ts → normalizeBatch: the expected event sequence. */
import { describe, expect, it } from "vitest";
import { normalizeBatch } from "./batch";
import { captureNames, captureReceivedAt, loadCapture, normalizeCapture } from "./test-fixtures";
import type { NormalizedLine } from "./types";

type Row = [type: string, attempt?: number | null, maxAttempts?: number | null, httpStatus?: number | null, code?: string | null, delayMs?: number | null, willRetry?: boolean | null];

/** The significant events (unknown and skipped lines left out) as compact rows. */
function rows(lines: NormalizedLine[]): Row[] {
  return lines
    .filter((l) => l.event && l.event.type !== "unknown")
    .map((l) => {
      const e = l.event!;
      if (e.type !== "retry" && e.type !== "turn.failed") return [e.type];
      return [e.type, e.attempt ?? null, e.maxAttempts ?? null, e.error?.httpStatus ?? null, e.error?.code ?? null, e.delayMs ?? null, e.willRetry ?? null];
    });
}

const retryRows = (n: number, max: number, status: number | null, code: string | null, delays: (number | null)[] = []): Row[] =>
  Array.from({ length: n }, (_, i) => ["retry", i + 1, max, status, code, delays[i] ?? null, true] as Row);

const CLAUDE_529_DELAYS = [
  577.5018031955816, 1232.9498168013793, 2276.362184460447, 4499.5915686252265, 9824.309992787406, 18977.49550996413,
  32535.726811727625, 34625.815843815726, 39100.77761499613, 33427.352332640054,
];

const EXPECTED: Record<string, { format: string; rows: Row[]; unknown: Record<string, number>; skipped: number; agent: string; provider: string }> = {
  "claude-a429-then-ok": {
    format: "claude",
    rows: [["turn.started"], ...retryRows(2, 10, 429, "rate_limit", [2000, 2000]), ["progress"], ["turn.completed"]],
    unknown: {},
    skipped: 0,
    agent: "claude-code",
    provider: "anthropic",
  },
  "claude-a529-overloaded": {
    format: "claude",
    rows: [
      ["turn.started"],
      ...retryRows(10, 10, 529, "overloaded", CLAUDE_529_DELAYS),
      ["retry", null, null, null, "server_error", null, false],
      ["turn.failed", null, null, 529, null, null, null],
    ],
    unknown: {},
    skipped: 0,
    agent: "claude-code",
    provider: "anthropic",
  },
  "codex-appserver-429-then-ok": {
    format: "codex",
    rows: [
      ["thread.started"],
      ["turn.started"],
      ...retryRows(2, 5, 429, "responseStreamDisconnected"),
      ["progress"],
      ["progress"],
      ["progress"],
      ["progress"],
      ["progress"],
      ["progress"],
      ["turn.completed"],
    ],
    unknown: { "thread/status/changed": 2, "item/started": 1, "item/completed": 1, "account/rateLimits/updated": 1 },
    skipped: 4, // 3 JSON-RPC responses + remoteControl/status/changed before any thread
    agent: "codex",
    provider: "mock",
  },
  "codex-appserver-503-capacity": {
    format: "codex",
    rows: [
      ["thread.started"],
      ["turn.started"],
      ["retry", null, null, null, "serverOverloaded", null, false],
      ["turn.failed", null, null, null, "serverOverloaded", null, null],
    ],
    unknown: { "thread/status/changed": 2, "item/started": 1, "item/completed": 1 },
    skipped: 4,
    agent: "codex",
    provider: "mock",
  },
  "codex-exec-429-always": {
    format: "codex-exec",
    rows: [
      ["thread.started"],
      ["turn.started"],
      ...retryRows(5, 5, null, null),
      ["retry", null, null, null, null, null, false],
      ["turn.failed", null, null, null, null, null, null],
    ],
    unknown: {},
    skipped: 0,
    agent: "codex-exec",
    provider: "openai",
  },
  "codex-exec-429-then-ok": {
    format: "codex-exec",
    rows: [["thread.started"], ["turn.started"], ...retryRows(2, 5, null, null), ["progress"], ["turn.completed"]],
    unknown: {},
    skipped: 0,
    agent: "codex-exec",
    provider: "openai",
  },
};

describe("shared captures normalize to the expected events", () => {
  const names = captureNames();

  it("finds the shared captures", () => {
    expect(names).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(names)("%s", (name) => {
    const want = EXPECTED[name];
    expect(want, `no expectation for capture ${name}`).toBeDefined();
    const { capture, result } = normalizeCapture(name);
    expect(capture.format).toBe(want.format);
    expect(result.rejected).toEqual([]);
    expect(rows(result.lines)).toEqual(want.rows);
    const unknown: Record<string, number> = {};
    for (const l of result.lines) if (l.event?.type === "unknown") unknown[l.nativeType ?? "?"] = (unknown[l.nativeType ?? "?"] ?? 0) + 1;
    expect(unknown).toEqual(want.unknown);
    expect(result.lines.filter((l) => l.event === null).length).toBe(want.skipped);
    // One thread per capture, agent/provider on every event, times from the capture.
    const events = result.lines.flatMap((l) => (l.event ? [l.event] : []));
    expect(new Set(events.map((e) => e.threadId)).size).toBe(1);
    for (const e of events) {
      expect(e.agent).toBe(want.agent);
      expect(e.provider).toBe(want.provider);
    }
    result.lines.forEach((l) => {
      const item = capture.items[l.index];
      expect(l.raw).toBe(item);
      expect(l.event?.at ?? item.at).toBe(item.at);
    });
    // Events after turn.started carry its turn id.
    const started = events.find((e) => e.type === "turn.started")!;
    expect(started.turnId).toBeTruthy();
    for (const e of events.slice(events.indexOf(started))) if (e.type !== "unknown") expect(e.turnId).toBe(started.turnId);
  });

  it("idempotency keys are stable across two normalizations and distinct per line", () => {
    for (const name of names) {
      const a = normalizeCapture(name).result.lines.map((l) => l.idempotencyKey);
      const capture = loadCapture(name);
      const b = normalizeBatch(capture.format, capture.items, { receivedAt: captureReceivedAt(capture) + 60_000 }).lines.map((l) => l.idempotencyKey);
      expect(b).toEqual(a);
      expect(new Set(a).size).toBe(a.length);
    }
  });

  it("keys unwrapped lines the same however the batch is split", () => {
    for (const name of names) {
      const capture = loadCapture(name);
      const receivedAt = captureReceivedAt(capture);
      const bare = capture.items.map((i) => i.message);
      const whole = normalizeBatch(capture.format, bare, { receivedAt }).lines.map((l) => l.idempotencyKey);
      expect(normalizeBatch(capture.format, bare, { receivedAt }).lines.map((l) => l.idempotencyKey)).toEqual(whole);
      const half = Math.floor(bare.length / 2);
      const first = normalizeBatch(capture.format, bare.slice(0, half), { receivedAt });
      const rest = normalizeBatch(capture.format, bare.slice(half), { receivedAt, ...first.context });
      expect([...first.lines, ...rest.lines].map((l) => l.idempotencyKey)).toEqual(whole);
    }
  });
});

describe("codex app-server capture details", () => {
  it("maps thread/started metadata and the retry error fields", () => {
    const { result } = normalizeCapture("codex-appserver-429-then-ok");
    const started = result.lines.find((l) => l.event?.type === "thread.started")!.event!;
    expect(started).toMatchObject({ threadId: "01a22840-f87b-75d3-9516-419974b7b058", provider: "mock", model: "gpt-5.5", agent: "codex", turnId: null });
    const retry = result.lines.find((l) => l.event?.type === "retry")!.event!;
    expect(retry.error).toEqual({
      httpStatus: 429,
      code: "responseStreamDisconnected",
      message: "Reconnecting... 1/5",
      details: {
        additionalDetails: "exceeded retry limit, last status: 429 Too Many Requests, request id: req_mock_eeeaf45c3696730d",
        codexErrorInfo: { responseStreamDisconnected: { httpStatusCode: 429 } },
      },
    });
  });

  it("uses emittedAtMs when a line is not wrapped", () => {
    const capture = loadCapture("codex-appserver-429-then-ok");
    const bare = capture.items.map((i) => i.message);
    const r = normalizeBatch("codex", bare, { receivedAt: captureReceivedAt(capture) });
    const retry = r.lines.find((l) => l.event?.type === "retry")!;
    expect(retry.event!.at).toBe(1795971676522);
    const response = r.lines.find((l) => l.nativeType === "response")!;
    expect(response.event).toBeNull();
  });

  it("codex exec lines without a wrapper take the receive time", () => {
    const capture = loadCapture("codex-exec-429-always");
    const receivedAt = captureReceivedAt(capture);
    const r = normalizeBatch("codex-exec", capture.items.map((i) => i.message), { receivedAt });
    expect(r.lines.every((l) => l.event!.at === receivedAt)).toBe(true);
  });
});
