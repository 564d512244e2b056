/** Every captured OpenTelemetry export, replayed request by request: the canonical events, then the thread the reducer derives. */
import { describe, expect, it } from "vitest";
import { replay, type RadarEvent } from "../retry";
import { normalizeBatch, withoutIgnored } from "./batch";
import { otlpItems } from "./otlp";
import { loadOtlpCapture, otlpCaptureNames, REPLAY_ORDERS, replayOrder, type ReplayOrder } from "./otlp-fixtures";
import type { NormalizedLine } from "./types";

function ingest(name: string, order: ReplayOrder = "capture") {
  const lines: NormalizedLine[] = [];
  let ignored = 0;
  let rejected = 0;
  let last = 0;
  for (const request of replayOrder(loadOtlpCapture(name), order)) {
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
  /** The episode's outcome, calls (the first included) and the agent's own retry time. */
  outcome?: string;
  attemptsMade?: number;
  reportedRetryMs?: number | null;
}

const codexRetries = (delays: number[], tail: Row[]): Row[] =>
  delays.flatMap((delay, i) => [["attempt", null, null, 429], ["retry", i + 1, delay, 429]] as Row[]).concat(tail);

const EXPECTED: Record<string, Expected> = {
  // Recorded for this suite (fixtures/otlp/RUN.md): CLAUDE_CODE_MAX_RETRIES=4 against 429s. The
  // logs say nothing until the give-up: 5 calls over 11.0 s, no retry seen one by one.
  "claude-otlp-429-always": {
    thread: "b29498cc-5309-4cbf-93a8-d94c4ba1046f",
    agent: "claude-code",
    rows: [["turn.started"], ["retry", 4, null, 429], ["turn.failed", 4, null, 429]],
    status: "failed",
    kind: "rate_limit",
    gaps: [],
    outcome: "failed",
    attemptsMade: 5,
    reportedRetryMs: 11_032,
  },
  // The same with the beta's traces: the four retries and their real gaps, then the give-up.
  "claude-otlp-429-always-traces": {
    thread: "d18bf24b-40fc-408c-b41d-66ea3ca46bad",
    agent: "claude-code",
    rows: [
      ["turn.started"],
      ...[1, 2, 3, 4].flatMap((n): Row[] => [["retry", n, null, 429], ["attempt", n, null, null]]),
      ["retry", 4, null, 429],
      ["turn.failed", 4, null, 429],
    ],
    status: "failed",
    kind: "rate_limit",
    gaps: [2029, 2014, 2418, 4419],
    outcome: "failed",
    attemptsMade: 5,
    reportedRetryMs: 10_944,
  },
  // OAuth: a 429 Claude does not retry, one call.
  "claude-ratelimit-rejected": {
    thread: "e79e78c0-92cf-4ea0-b9d6-3988a712744d",
    agent: "claude-code",
    rows: [["turn.started"], ["retry", 0, null, 429]],
    status: "failed",
    kind: "rate_limit",
    gaps: [],
    outcome: "failed",
    attemptsMade: 1,
    reportedRetryMs: null,
  },
  "claude-ratelimit-allowed-warning": {
    thread: "e87684b8-25f0-4936-a6dc-d82ff4765dec",
    agent: "claude-code",
    rows: [["turn.started"], ["turn.completed"]],
    status: "completed",
    kind: null,
    gaps: [],
  },
  // Recorded for this suite: `codex exec` in a 503 storm exits 1 before its last export. Four
  // failed codex.api_request logs (attempt 0..3), no trace: the retries are derived from the
  // calls, and the watchdog ends the episode (see the stalled case below).
  "codex-otlp-exec-503-capacity": {
    thread: "01a252dc-a23a-7722-acbc-5525aa1e2068",
    agent: "codex-exec",
    rows: [["thread.started"], ["turn.started"], ...[1, 2, 3, 4].map((): Row => ["attempt", null, null, 503])],
    status: "retrying",
    kind: "capacity",
    gaps: [197, 411, 820],
    outcome: undefined,
    attemptsMade: 4,
    reportedRetryMs: null,
  },
  "codex-ratelimit-appserver-ok": {
    thread: "01a22b92-0f38-7532-8ad5-0a6fccc25ac5",
    agent: "codex",
    rows: [["thread.started"], ["turn.started"], ["attempt", null, null, null], ["turn.completed"]],
    status: "completed",
    kind: null,
    gaps: [],
  },
  // A usage limit Codex does not retry: one call, the turn failed, no episode.
  "codex-ratelimit-appserver-usage-limit": {
    thread: "01a22b92-746c-7131-9bdc-ad4d3973c9b9",
    agent: "codex",
    rows: [["thread.started"], ["turn.started"], ["attempt", null, null, 429], ["turn.failed", null, null, 429]],
    status: "failed",
    kind: null,
    gaps: [],
  },
  "claude-otlp-429-then-ok-traces": {
    thread: "dd611010-456e-4062-9462-f4562961a539",
    agent: "claude-code",
    rows: [["turn.started"], ["retry", 1, null, null], ["attempt", 1, null, null], ["retry", 2, null, null], ["attempt", 2, null, null], ["turn.completed"]],
    status: "completed",
    kind: "other",
    gaps: [2049, 2013],
    outcome: "completed",
    attemptsMade: 3,
    reportedRetryMs: null,
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
    outcome: "failed",
    attemptsMade: 6,
    reportedRetryMs: null,
  },
  "codex-otlp-exec-429-then-ok": {
    thread: "01a22b90-2290-7dd0-aa8c-db3eaae2896a",
    agent: "codex-exec",
    rows: [["thread.started"], ["turn.started"], ...codexRetries([1999, 1999], [["attempt", null, null, null], ["turn.completed"]])],
    status: "completed",
    kind: "rate_limit",
    gaps: [2003, 2009],
    outcome: "recovered",
    attemptsMade: 3,
    reportedRetryMs: null,
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
    expect(episode).toMatchObject({ outcome: want.outcome ?? null, attemptsMade: want.attemptsMade, reportedRetryMs: want.reportedRetryMs });
    expect(state.episodeCount).toBe(1);
  });

  /** What must not depend on how the exports arrived: per thread, its status and its episodes. */
  const outcome = (name: string, order: ReplayOrder) => {
    const { events, last } = ingest(name, order);
    const byThread = new Map<string, RadarEvent[]>();
    for (const e of events) byThread.set(e.threadId, [...(byThread.get(e.threadId) ?? []), e]);
    return [...byThread].map(([thread, list]) => {
      const s = replay(list, last + 1000);
      const ep = s.episode;
      return { thread, status: s.status, episodes: s.episodeCount, kind: ep?.kind ?? null, outcome: ep?.outcome ?? null, attemptsMade: ep?.attemptsMade ?? null, retries: ep?.attempts.length ?? null, reportedRetryMs: ep?.reportedRetryMs ?? null };
    });
  };

  describe.each(REPLAY_ORDERS.filter((o) => o !== "capture"))("replayed %s", (order) => {
    it.each(Object.keys(EXPECTED))("%s: the same threads, kinds, statuses and attempt counts", (name) => {
      const want = EXPECTED[name];
      const got = outcome(name, order);
      expect(got).toEqual(outcome(name, "capture"));
      expect(got).toEqual([expect.objectContaining({ thread: want.thread, status: want.status, kind: want.kind, attemptsMade: want.attemptsMade ?? null })]);
    });
  });

  it("a Codex exec storm whose calls stopped coming ends by the watchdog: exhausted, its four calls counted", () => {
    const { events, last } = ingest("codex-otlp-exec-503-capacity");
    const settings: RadarEvent = { seq: -1, type: "settings.changed", at: events[0].at, threadId: events[0].threadId, settings: { reach: { interrupt: false, continue: false } } };
    const state = replay([settings, ...events], last + 30 * 60_000);
    expect(state.status).toBe("exhausted");
    expect(state.episode).toMatchObject({ kind: "capacity", outcome: "exhausted", attemptsMade: 4 });
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

  it("a Codex stream event that reports a failure is no progress", () => {
    const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });
    const log = (extra: { key: string; value: unknown }[]) => ({
      resourceLogs: [{ resource: { attributes: [attr("service.name", "codex_exec")] }, scopeLogs: [{ logRecords: [{ timeUnixNano: "0", attributes: [attr("event.name", "codex.sse_event"), attr("event.timestamp", "2026-11-30T08:25:06.643Z"), attr("conversation.id", "c1"), ...extra] }] }] }],
    });
    const receivedAt = Date.parse("2026-11-30T08:25:07Z");
    const events = (extra: { key: string; value: unknown }[]) => withoutIgnored(normalizeBatch("otlp", otlpItems("logs", log(extra)).items, { receivedAt }).lines).lines.map((l) => l.event!.type);
    expect(events([attr("event.kind", "response.output_text.delta")])).toEqual(["progress"]);
    expect(events([attr("event.kind", "response.failed")])).toEqual([]);
    expect(events([attr("event.kind", "response.completed"), attr("error.message", "stream disconnected")])).toEqual([]);
  });

  it("counts metric data points and makes no events of them", () => {
    const [metrics] = loadOtlpCapture("codex-otlp-exec-429-then-ok").filter((r) => r.signal === "metrics");
    const { items, dataPoints } = otlpItems("metrics", metrics.body);
    expect(items).toEqual([]);
    expect(dataPoints).toBeGreaterThan(0);
  });
});
