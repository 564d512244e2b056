import { describe, expect, it } from "vitest";
import { shared } from "@/lib/process-state";
import { GAP_BOUNDS_MS } from "./gaps";
import { createMetricsRegistry, renderMetrics, type InstanceState, type MetricsSnapshot } from "./metrics";

const bins = (entries: Record<number, number>) => Array.from({ length: GAP_BOUNDS_MS.length + 1 }, (_, i) => entries[i] ?? 0);

const snapshot: MetricsSnapshot = {
  notices: [{ kind: "rate_limit", provider: "openai", model: "gpt-5", agent: "codex", value: 3 }],
  episodes: [{ outcome: "recovered", kind: "rate_limit", provider: "openai", model: "gpt-5", value: 1 }],
  directives: [{ kind: "interrupt", result: "acknowledged", value: 2 }],
  threads: [{ status: "retrying", value: 4 }],
  earlyAttempts: [{ kind: "rate_limit", provider: "openai", agent: "codex", value: 1 }],
  attempts: [{ kind: "rate_limit", provider: "openai", model: "gpt-5", value: 2 }],
  waitMs: [{ kind: "rate_limit", provider: "openai", model: "gpt-5", value: 2_230 }],
  // 230 ms (bin ≤ 250 ms) and 2 s (bin ≤ 2 s), and one above an hour.
  advisedDelay: [{ labels: { kind: "rate_limit", provider: "openai" }, bins: bins({ 4: 2 }), sumMs: 4_000, count: 2 }],
  actualGap: [{ labels: { kind: "rate_limit", provider: "openai" }, bins: bins({ 1: 1, 4: 1, 14: 1 }), sumMs: 3_602_230, count: 3 }],
  incidentsOpen: [{ kind: "rate_limit", provider: "openai", model: "gpt-5", value: 1 }],
  incidentsTotal: 2,
  alertOutbox: [{ result: "pending", value: 1 }],
  alertOldestPendingS: 12,
};

describe("metrics registry", () => {
  it("renders the snapshot through prom-client, reading it once per scrape", async () => {
    let reads = 0;
    const metrics = createMetricsRegistry(() => {
      reads++;
      return snapshot;
    });
    const text = await metrics.scrape();
    expect(reads).toBe(1);
    const lines = text.split("\n");
    for (const line of [
      "# TYPE radar_retry_notices_total counter",
      'radar_retry_notices_total{kind="rate_limit",provider="openai",model="gpt-5",agent="codex"} 3',
      'radar_episodes_total{outcome="recovered",kind="rate_limit",provider="openai",model="gpt-5"} 1',
      'radar_directives_total{kind="interrupt",result="acknowledged"} 2',
      'radar_retry_early_attempts_total{kind="rate_limit",provider="openai",agent="codex"} 1',
      'radar_retry_wait_seconds_total{kind="rate_limit",provider="openai",model="gpt-5"} 2.23',
      "# TYPE radar_threads gauge",
      'radar_threads{status="retrying"} 4',
      'radar_threads{status="stalled"} 0',
      'radar_alert_outbox{result="pending"} 1',
      'radar_alert_outbox{result="failed"} 0',
      "radar_alert_oldest_pending_seconds 12",
      "# TYPE radar_retry_actual_gap_seconds histogram",
      'radar_retry_actual_gap_seconds_bucket{le="0.1",kind="rate_limit",provider="openai"} 0',
      'radar_retry_actual_gap_seconds_bucket{le="0.25",kind="rate_limit",provider="openai"} 1',
      'radar_retry_actual_gap_seconds_bucket{le="2",kind="rate_limit",provider="openai"} 2',
      'radar_retry_actual_gap_seconds_bucket{le="3600",kind="rate_limit",provider="openai"} 2',
      'radar_retry_actual_gap_seconds_bucket{le="+Inf",kind="rate_limit",provider="openai"} 3',
      'radar_retry_actual_gap_seconds_sum{kind="rate_limit",provider="openai"} 3602.23',
      'radar_retry_actual_gap_seconds_count{kind="rate_limit",provider="openai"} 3',
      'radar_retry_advised_delay_seconds_bucket{le="+Inf",kind="rate_limit",provider="openai"} 2',
    ]) {
      expect(lines).toContain(line);
    }
  });

  it("exposes whether this instance leads the watchdog, read at each scrape, only when told", async () => {
    let leads = false;
    const metrics = createMetricsRegistry(() => snapshot, { watchdogLeader: () => leads });
    expect((await metrics.scrape()).split("\n")).toEqual(expect.arrayContaining(["# TYPE radar_watchdog_leader gauge", "radar_watchdog_leader 0"]));
    leads = true;
    expect((await metrics.scrape()).split("\n")).toContain("radar_watchdog_leader 1");
    expect(await createMetricsRegistry(() => snapshot).scrape()).not.toContain("radar_watchdog_leader");
  });

  it("reloads from the database on every scrape instead of accumulating", async () => {
    let current = snapshot;
    const metrics = createMetricsRegistry(() => current);
    await metrics.scrape();
    current = { ...snapshot, notices: [{ ...snapshot.notices[0], value: 5 }], actualGap: [] };
    const text = await metrics.scrape();
    expect(text).toContain('radar_retry_notices_total{kind="rate_limit",provider="openai",model="gpt-5",agent="codex"} 5\n');
    expect(text).not.toContain("radar_retry_actual_gap_seconds_bucket");
  });

  it("exposes open incidents by scope and every incident opened", async () => {
    const text = await createMetricsRegistry(() => snapshot).scrape();
    expect(text).toContain('radar_incidents_open{kind="rate_limit",provider="openai",model="gpt-5"} 1');
    expect(text).toContain("radar_incidents_total 2");
  });

  it("keeps a counter a replay lowered at the highest value it exposed, and so does a registry made from what it exposed", async () => {
    const notices = (value: number): MetricsSnapshot => ({ ...snapshot, notices: [{ ...snapshot.notices[0], value }] });
    const line = (value: number) => `radar_retry_notices_total{kind="rate_limit",provider="openai",model="gpt-5",agent="codex"} ${value}\n`;
    let current = notices(7);
    const first = createMetricsRegistry(() => current);
    expect(await first.scrape()).toContain(line(7));
    current = notices(4);
    expect(await first.scrape()).toContain(line(7));
    // A registry started again (the read worker's, after a crash) from what the first exposed.
    const again = createMetricsRegistry(() => current, undefined, first.exposed());
    expect(await again.scrape()).toContain(line(7));
    current = notices(9);
    expect(await again.scrape()).toContain(line(9));
    // Without it, a registry exposes what the database holds now: what a process restart does.
    current = notices(4);
    expect(await createMetricsRegistry(() => current).scrape()).toContain(line(4));
  });
});

describe("renderMetrics: the text of one scrape, rendered by this thread's one registry", () => {
  const fresh = () => delete shared<{ exposition?: unknown }>("exposition", () => ({})).exposition;
  const instance = (watchdogLeader: boolean): InstanceState => ({ watchdogLeader });

  it("renders what the registry renders, with the serving process's state as of each scrape", async () => {
    fresh();
    const rendered = await renderMetrics(snapshot, instance(true), null);
    expect(rendered.text).toBe(await createMetricsRegistry(() => snapshot, { watchdogLeader: () => true }).scrape());
    expect(rendered.contentType).toMatch(/^text\/plain/);
    expect((await renderMetrics(snapshot, instance(false), rendered.exposed)).text.split("\n")).toContain("radar_watchdog_leader 0");
  });

  it("goes on from the counters' values the serving thread handed it when its registry is made again", async () => {
    fresh();
    const high = await renderMetrics({ ...snapshot, waitMs: [{ ...snapshot.waitMs[0], value: 9_000 }] }, instance(true), null);
    const line = 'radar_retry_wait_seconds_total{kind="rate_limit",provider="openai",model="gpt-5"}';
    fresh();
    // Lowered by a replay meanwhile, read by a registry made again: still 9 s, not 2.23.
    expect((await renderMetrics(snapshot, instance(true), high.exposed)).text).toContain(`${line} 9\n`);
    fresh();
    expect((await renderMetrics(snapshot, instance(true), null)).text).toContain(`${line} 2.23\n`);
    fresh();
  });
});
