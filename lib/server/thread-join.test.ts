import { beforeAll, describe, expect, it } from "vitest";
import { OTLP_FORMAT, type LineFormat, type NormalizedEvent, type NormalizedLine } from "@/lib/ingest/types";
import { normalizedLines, useFreshDatabase } from "@/e2e/support/in-process";

/**
 * One agent thread reported by a relay and by OpenTelemetry (two sources): one row, the relay's,
 * whichever path came first, and every fact counted once (lib/db/thread-join.ts).
 */
useFreshDatabase("join");

type Modules = {
  pipeline: typeof import("./pipeline");
  tokens: typeof import("./tokens");
  client: typeof import("@/lib/db/client");
  rollups: typeof import("@/lib/db/rollups");
  threads: typeof import("@/lib/db/threads");
  resolve: typeof import("./resolve-thread");
};
let m: Modules;
beforeAll(async () => {
  m = {
    pipeline: await import("./pipeline"),
    tokens: await import("./tokens"),
    client: await import("@/lib/db/client"),
    rollups: await import("@/lib/db/rollups"),
    threads: await import("@/lib/db/threads"),
    resolve: await import("./resolve-thread"),
  };
});

const T0 = Date.now() - 120_000;
const lines = (format: LineFormat, threadId: string, events: Partial<NormalizedEvent>[]): NormalizedLine[] =>
  normalizedLines(events, { receivedAt: T0, format, base: { threadId, agent: "claude-code", provider: "anthropic" } });

/** The same two retries and their end, as each path reports them. */
const retried = (at: number): Partial<NormalizedEvent>[] => [
  { type: "turn.started", turnId: "u1", at },
  { type: "retry", turnId: "u1", at: at + 1_000, attempt: 1, willRetry: true, delayMs: 2_000, error: { httpStatus: 429 } },
  { type: "attempt", turnId: "u1", at: at + 3_000, attempt: 1 },
  { type: "retry", turnId: "u1", at: at + 4_000, attempt: 2, willRetry: true, delayMs: 2_000, error: { httpStatus: 429 } },
  { type: "attempt", turnId: "u1", at: at + 6_000, attempt: 2 },
  { type: "turn.completed", turnId: "u1", at: at + 9_000 },
];

const sql = () => m.client.db().sql;
const row = (sourceId: string, id: string) =>
  sql().prepare(`SELECT id, joinedTo FROM "Thread" WHERE sourceId = ? AND externalId = ?`).get(sourceId, id) as { id: number; joinedTo: number | null };
/** Rollup rows as stored and as the raw aggregation gives them (zero rows left out). */
function rollups() {
  const norm = (rows: Record<string, unknown>[]) =>
    rows
      .filter((r) => ["n", "ms", "waited"].some((v) => r[v] !== 0))
      .map((r) => JSON.stringify([r.fact, r.minute, r.kind, r.sourceId, r.label, r.n, r.ms, r.waited]))
      .sort();
  return { stored: norm(sql().prepare(`SELECT * FROM "Rollup"`).all() as Record<string, unknown>[]), raw: norm(sql().prepare(m.rollups.factsSql("1", "1")).all() as Record<string, unknown>[]) };
}
const attemptFacts = (sourceId: string) =>
  (sql().prepare(`SELECT coalesce(sum(n), 0) FROM "Rollup" WHERE fact = 'attempt' AND sourceId = ?`).pluck().get(sourceId) as number) ?? 0;

describe("one agent thread, two paths", () => {
  it.each([
    ["the relay first", ["relay", "otlp"]],
    ["OpenTelemetry first", ["otlp", "relay"]],
  ] as const)("%s: one row (the relay's), the other path named, its facts counted once", async (_name, order) => {
    const id = `session-${order[0]}`;
    const relay = await m.tokens.createSource(`relay-${order[0]}`, `rr_relay_${order[0]}_${Date.now()}`);
    const otel = await m.tokens.createSource(`otel-${order[0]}`, `rr_otel_${order[0]}_${Date.now()}`);
    for (const path of order) {
      if (path === "relay") await m.pipeline.ingestLines(relay, lines("claude", id, retried(T0)), T0 + 10_000);
      else await m.pipeline.ingestLines(otel, lines(OTLP_FORMAT, id, retried(T0 + 200)), T0 + 10_000);
    }
    const relayRow = row(relay.id, id);
    expect(row(otel.id, id).joinedTo).toBe(relayRow.id);
    expect(relayRow.joinedTo).toBeNull();

    const board = await m.threads.threadBoard({ q: id });
    expect(board.threads.map((t) => [t.key, t.alsoReportedBy.map((o) => o.source)])).toEqual([[relayRow.id, [otel.name]]]);
    expect(board.total).toBe(1);

    // The relay's two attempts, once; the joined thread adds none, and the rollups stay exact.
    expect(attemptFacts(relay.id)).toBe(2);
    expect(attemptFacts(otel.id)).toBe(0);
    const { stored, raw } = rollups();
    expect(stored).toEqual(raw);

    // The relay's page shows both paths' events in one timeline; the joined thread's page points back.
    const detail = (await m.threads.threadDetail(relayRow.id))!;
    expect(detail.events.filter((e) => e.format === OTLP_FORMAT)).toHaveLength(6);
    expect(detail.events.filter((e) => e.format === "claude")).toHaveLength(6);
    const ats = detail.events.map((e) => e.at);
    expect(ats).toEqual([...ats].sort());
    expect((await m.threads.threadDetail(row(otel.id, id).id))!.joinedTo?.key).toBe(relayRow.id);
    // The bare id names the thread the board shows; ?source= still reaches the joined one.
    expect(await m.resolve.resolveThread(id, null)).toEqual({ ok: true, key: relayRow.id });
    expect(await m.resolve.resolveThread(id, otel.name)).toEqual({ ok: true, key: row(otel.id, id).id });
  });

  it("a later OpenTelemetry batch of a joined thread adds no facts and no incident notice", async () => {
    const id = "session-later";
    const relay = await m.tokens.createSource("relay-later", `rr_relay_later_${Date.now()}`);
    const otel = await m.tokens.createSource("otel-later", `rr_otel_later_${Date.now()}`);
    await m.pipeline.ingestLines(relay, lines("claude", id, retried(T0)), T0 + 10_000);
    await m.pipeline.ingestLines(otel, lines(OTLP_FORMAT, id, retried(T0).slice(0, 3)), T0 + 10_000);
    await m.pipeline.ingestLines(otel, lines(OTLP_FORMAT, id, retried(T0).slice(3)), T0 + 11_000);
    expect(attemptFacts(otel.id)).toBe(0);
    const seen = sql().prepare(`SELECT coalesce(sum(n), 0) FROM "MetricTotal" WHERE fact = 'noticeSeen'`).pluck().get() as number;
    await m.pipeline.ingestLines(otel, lines(OTLP_FORMAT, id, [{ type: "retry", turnId: "u2", at: T0 + 12_000, attempt: 1, willRetry: true, error: { httpStatus: 429 } }]), T0 + 12_000);
    expect(sql().prepare(`SELECT coalesce(sum(n), 0) FROM "MetricTotal" WHERE fact = 'noticeSeen'`).pluck().get()).toBe(seen);
    const { stored, raw } = rollups();
    expect(stored).toEqual(raw);
  });

  it("never joins threads of one source, nor two OpenTelemetry threads", async () => {
    const both = await m.tokens.createSource("both", `rr_both_${Date.now()}`);
    await m.pipeline.ingestLines(both, lines("claude", "same-source", retried(T0)), T0 + 10_000);
    await m.pipeline.ingestLines(both, lines(OTLP_FORMAT, "same-source", retried(T0)), T0 + 10_000);
    expect(row(both.id, "same-source").joinedTo).toBeNull();

    const a = await m.tokens.createSource("otel-a", `rr_otel_a_${Date.now()}`);
    const b = await m.tokens.createSource("otel-b", `rr_otel_b_${Date.now()}`);
    await m.pipeline.ingestLines(a, lines(OTLP_FORMAT, "two-exporters", retried(T0)), T0 + 10_000);
    await m.pipeline.ingestLines(b, lines(OTLP_FORMAT, "two-exporters", retried(T0)), T0 + 10_000);
    expect([row(a.id, "two-exporters").joinedTo, row(b.id, "two-exporters").joinedTo]).toEqual([null, null]);
  });
});
