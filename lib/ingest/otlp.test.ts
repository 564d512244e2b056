/** Every captured OpenTelemetry export, replayed request by request: the canonical events, then the thread the reducer derives. */
import { describe, expect, it } from "vitest";
import { replay, type RadarEvent } from "../retry";
import { normalizeBatch, withoutIgnored } from "./batch";
import { otlpItems } from "./otlp";
import { loadOtlpCapture, otlpCaptureNames } from "./otlp-fixtures";
import type { NormalizedLine } from "./types";

function ingest(name: string) {
  const lines: NormalizedLine[] = [];
  let ignored = 0;
  let rejected = 0;
  let last = 0;
  for (const request of loadOtlpCapture(name)) {
    last = request.receivedAt;
    const { items } = otlpItems(request.signal, request.body);
    const batch = normalizeBatch("otlp", items, { receivedAt: request.receivedAt });
    rejected += batch.rejected.length;
    const kept = withoutIgnored(batch.lines);
    ignored += kept.ignored;
    lines.push(...kept.lines);
  }
  const events: RadarEvent[] = lines.map((l, seq) => ({ ...l.event!, seq }));
  return { lines, events, ignored, rejected, last };
}

type Row = [type: string, attempt?: number | null, delayMs?: number | null, httpStatus?: number | null];
const rows = (events: RadarEvent[]): Row[] =>
  [...events]
    .sort((a, b) => a.at - b.at || a.seq - b.seq)
    .filter((e) => e.type !== "progress")
    .map((e) => (e.type === "retry" || e.type === "attempt" || e.type === "turn.failed" ? [e.type, e.attempt ?? null, e.delayMs ?? null, e.error?.httpStatus ?? null] : [e.type]));

interface Expected {
  thread: string;
  agent: string;
  rows: Row[];
  status: string;
  kind: string | null;
  /** Per retry: the gap from its notice to the attempt it started (null: none started). */
  gaps: (number | null)[];
}

const codexRetries = (delays: number[], tail: Row[]): Row[] =>
  delays.flatMap((delay, i) => [["attempt", null, null, 429], ["retry", i + 1, delay, 429]] as Row[]).concat(tail);

const EXPECTED: Record<string, Expected> = {
  "claude-otlp-429-then-ok-traces": {
    thread: "dd611010-456e-4062-9462-f4562961a539",
    agent: "claude-code",
    rows: [["turn.started"], ["retry", 1, null, null], ["attempt", 1, null, null], ["retry", 2, null, null], ["attempt", 2, null, null], ["turn.completed"]],
    status: "completed",
    kind: "other",
    gaps: [2049, 2013],
  },
  "claude-otlp-529-then-ok": {
    thread: "6b29a0f9-bd1b-4c91-94f3-40f337f2843b",
    agent: "claude-code",
    rows: [["turn.started"], ["turn.completed"]],
    status: "completed",
    kind: null,
    gaps: [],
  },
  "codex-otlp-appserver-429-always": {
    thread: "01a22b92-ff9f-7db0-ac69-63bfd7a076c1",
    agent: "codex",
    rows: [["thread.started"], ["turn.started"], ...codexRetries([1998, 1999, 1999, 1999, 1999], [["attempt", null, null, 429], ["turn.failed", null, null, 429]])],
    status: "failed",
    kind: "rate_limit",
    gaps: [2004, 2007, 2005, 2006, 2007],
  },
  "codex-otlp-exec-429-then-ok": {
    thread: "01a22b90-2290-7dd0-aa8c-db3eaae2896a",
    agent: "codex-exec",
    rows: [["thread.started"], ["turn.started"], ...codexRetries([1999, 1999], [["attempt", null, null, null], ["turn.completed"]])],
    status: "completed",
    kind: "rate_limit",
    gaps: [2003, 2009],
  },
};

describe("captured OpenTelemetry exports", () => {
  it("finds the captures", () => {
    expect(otlpCaptureNames()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.keys(EXPECTED))("%s", (name) => {
    const want = EXPECTED[name];
    const { events, rejected, ignored, last } = ingest(name);
    expect(rejected).toBe(0);
    expect(ignored).toBeGreaterThan(0);
    expect(new Set(events.map((e) => e.threadId))).toEqual(new Set([want.thread]));
    expect(new Set(events.map((e) => e.agent))).toEqual(new Set([want.agent]));
    expect(rows(events)).toEqual(want.rows);
    const state = replay(events, last + 1000);
    expect(state.status).toBe(want.status);
    const episode = state.episode;
    if (want.kind === null) {
      expect(episode).toBeNull();
      return;
    }
    expect(episode?.kind).toBe(want.kind);
    expect(episode?.attempts.map((a) => (a.startedAt === null ? null : a.startedAt - a.noticeAt))).toEqual(want.gaps);
  });

  it("the exact delays of Codex retry notices make the countdown exact", () => {
    const { events } = ingest("codex-otlp-appserver-429-always");
    const state = replay(
      events.filter((e) => e.type !== "turn.failed" && !(e.type === "attempt" && e.at > events.find((x) => x.type === "retry" && x.attempt === 5)!.at)),
      events.find((e) => e.type === "retry" && e.attempt === 5)!.at + 10,
    );
    expect(state.status).toBe("retrying");
    expect(state.retry).toMatchObject({ attempt: 5, kind: "rate_limit", nextAttemptEstimated: false });
  });

  it("Claude's exports never show a countdown: after each export arrives, the thread is not waiting on a retry", () => {
    for (const name of otlpCaptureNames().filter((n) => n.startsWith("claude"))) {
      const lines: NormalizedLine[] = [];
      for (const request of loadOtlpCapture(name)) {
        lines.push(...withoutIgnored(normalizeBatch("otlp", otlpItems(request.signal, request.body).items, { receivedAt: request.receivedAt }).lines).lines);
        if (lines.length === 0) continue;
        const state = replay(lines.map((l, seq) => ({ ...l.event!, seq })), request.receivedAt);
        expect(state.status, `${name} after ${request.path} at ${request.receivedAt}`).not.toBe("retrying");
      }
    }
  });

  it("keys every record by its content: the same export re-sent gives the same keys", () => {
    for (const name of otlpCaptureNames()) {
      const first = ingest(name).lines.map((l) => l.idempotencyKey);
      const again = ingest(name).lines.map((l) => l.idempotencyKey);
      expect(again).toEqual(first);
      expect(new Set(first).size).toBe(first.length);
      // Each key starts with its record's own time: an export's keys sort by time.
      for (const key of first) expect(key).toMatch(/^otlp@[0-9a-z]{9}:[0-9a-f]{64}$/);
      expect(first.filter((key) => key.startsWith("otlp@000000000:"))).toEqual([]);
    }
  });

  it("rejects a record it cannot place, keeps the rest, ignores unknown services", () => {
    const log = (attributes: unknown[], service = "claude-code") => ({
      resourceLogs: [{ resource: { attributes: [{ key: "service.name", value: { stringValue: service } }] }, scopeLogs: [{ logRecords: [{ timeUnixNano: "1796027106643000000", attributes }] }] }],
    });
    const name = { key: "event.name", value: { stringValue: "api_request" } };
    const receivedAt = 1796027107000;
    const noSession = normalizeBatch("otlp", otlpItems("logs", log([name])).items, { receivedAt });
    expect(noSession.rejected).toEqual([{ index: 0, error: "claude_code.api_request: attribute session.id is required" }]);
    const other = normalizeBatch("otlp", otlpItems("logs", log([name], "some-service")).items, { receivedAt });
    expect(withoutIgnored(other.lines)).toEqual({ lines: [], ignored: 1 });
    const notARecord = normalizeBatch("otlp", [{ signal: "logs", resource: {}, record: 7 }], { receivedAt });
    expect(notARecord.rejected).toHaveLength(1);
  });

  it("counts metric data points and makes no events of them", () => {
    const [metrics] = loadOtlpCapture("codex-otlp-exec-429-then-ok").filter((r) => r.signal === "metrics");
    const { items, dataPoints } = otlpItems("metrics", metrics.body);
    expect(items).toEqual([]);
    expect(dataPoints).toBeGreaterThan(0);
  });
});
