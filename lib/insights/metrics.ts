import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { THREAD_STATUSES } from "@/lib/retry/types";
import { ALERT_STATES } from "@/lib/alerts/delivery";
import { GAP_BOUNDS_MS } from "./gaps";
import { shared } from "@/lib/process-state";

/**
 * GET /api/metrics: Prometheus text through prom-client, on a dedicated Registry (nothing
 * else in the process can add series to it; no default process metrics).
 *
 * Values are never counted in memory: the server may restart, run as several instances, or
 * replay a thread, and the database is the only truth. Each scrape reads one snapshot from the
 * database (`read`: the metric totals of lib/db/rollups.ts, through lib/db/metrics.ts) and every
 * metric's collect() callback resets itself and loads its values from that snapshot. Notices are
 * counted as seen, which never decreases; episodes, early retries and waits are corrected facts,
 * which a replay may lower, so a counter exposes the highest value it has exposed for its series:
 * the serving thread keeps those values and hands them to a registry made again (a read worker
 * restarted after a crash), while a process restart is a counter reset to Prometheus.
 *
 * Labels are low-cardinality only: kind, provider, model, agent, outcome, status, directive
 * kind and result. Never thread, turn or source ids.
 */
export type LabelRow<L extends string> = Record<L, string> & { value: number };

export interface HistogramRow {
  labels: { kind: string; provider: string };
  /** Non-cumulative counts per GAP_BOUNDS_MS bin plus the open bin (length bounds + 1). */
  bins: number[];
  sumMs: number;
  count: number;
}

export interface MetricsSnapshot {
  notices: LabelRow<"kind" | "provider" | "model" | "agent">[];
  episodes: LabelRow<"outcome" | "kind" | "provider" | "model">[];
  directives: LabelRow<"kind" | "result">[];
  threads: LabelRow<"status">[];
  earlyAttempts: LabelRow<"kind" | "provider" | "agent">[];
  /** Retries made (each after the first call), the ones an agent counted at give-up but no notice showed included. */
  attempts: LabelRow<"kind" | "provider" | "model">[];
  /** Finished waits only (an open wait would shrink when its end arrives late, breaking monotonicity). */
  waitMs: LabelRow<"kind" | "provider" | "model">[];
  advisedDelay: HistogramRow[];
  actualGap: HistogramRow[];
  /** Open incidents per scope (provider and model empty for usage limits, which are per source). */
  incidentsOpen: LabelRow<"kind" | "provider" | "model">[];
  /** Incidents ever opened (closed ones included). */
  incidentsTotal: number;
  /** Alerts in the outbox by where they stand (pending, delivered, failed). */
  alertOutbox: LabelRow<"result">[];
  /** Age of the oldest alert still pending (seconds); 0 when none is. */
  alertOldestPendingS: number;
}

const BUCKETS_S = GAP_BOUNDS_MS.map((ms) => ms / 1000);

/**
 * prom-client's Histogram only takes single observations, and replaying every attempt on
 * every scrape costs about 0.6 µs each in JS (0.12 s for 200k attempts). The counts are
 * already binned in SQL, so they are loaded into the histogram's per-label state directly.
 * That state's shape (`hashMap` of {labels, bucketValues, sum, count}) is prom-client 15's,
 * pinned in package.json; lib/insights/metrics.test.ts checks the text it produces.
 */
function loadHistogram(histogram: Histogram<"kind" | "provider">, rows: readonly HistogramRow[]) {
  histogram.reset();
  const state = histogram as unknown as { hashMap: Record<string, unknown> };
  rows.forEach((row, i) => {
    const bucketValues: Record<number, number> = {};
    BUCKETS_S.forEach((bound, b) => (bucketValues[bound] = row.bins[b] ?? 0));
    state.hashMap[`row${i}`] = { labels: row.labels, bucketValues, sum: row.sumMs / 1000, count: row.count };
  });
}

/** What only this process knows, not the database: exposed as is, per instance. */
export interface InstanceFacts {
  /** Whether this instance runs the watchdog now (the leader among several on PostgreSQL). */
  watchdogLeader: () => boolean;
}

/** The counters' highest values exposed so far, by metric and series (JSON text): what keeps them from going down. */
export type ExposedCounters = string;

/**
 * `exposedBefore`: the counters' values a registry before this one exposed (its `exposed()`), so
 * that a registry started again never exposes less than they did.
 */
export function createMetricsRegistry(read: () => MetricsSnapshot | Promise<MetricsSnapshot>, instance?: InstanceFacts, exposedBefore?: ExposedCounters | null) {
  const registry = new Registry();
  // Keyed by metric name and series: one map, so that what it holds can seed a registry started again.
  const highest = new Map<string, number>(exposedBefore ? (JSON.parse(exposedBefore) as [string, number][]) : []);
  let snapshot: MetricsSnapshot | null = null;
  const current = () => {
    if (!snapshot) throw new Error("metrics are read through scrape()");
    return snapshot;
  };
  const registers = [registry];

  const counter = <L extends string>(name: string, help: string, labelNames: L[], rows: (s: MetricsSnapshot) => LabelRow<L>[], scale = 1) => {
    return new Counter<L>({
      name,
      help,
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const row of rows(current())) {
          const { value, ...labels } = row;
          const series = `${name} ${JSON.stringify(labels)}`;
          const exposed = Math.max(value, highest.get(series) ?? 0);
          highest.set(series, exposed);
          this.inc(labels as unknown as Record<L, string>, exposed * scale);
        }
      },
    });
  };

  counter("radar_retry_notices_total", "Retry notices received, by trouble kind and the thread's provider, model and agent.", ["kind", "provider", "model", "agent"], (s) => s.notices);
  counter("radar_episodes_total", "Retry episodes that ended, by outcome and kind.", ["outcome", "kind", "provider", "model"], (s) => s.episodes);
  counter("radar_directives_total", "Directives sent to sources, by kind and result (pending, delivered, acknowledged, failed, expired).", ["kind", "result"], (s) => s.directives);
  counter("radar_retry_early_attempts_total", "Retries that started earlier than the provider advised.", ["kind", "provider", "agent"], (s) => s.earlyAttempts);
  counter("radar_retry_attempts_total", "Retries made (calls after the first), those an agent reported at give-up included.", ["kind", "provider", "model"], (s) => s.attempts);
  counter("radar_retry_wait_seconds_total", "Time lost waiting in backoff (finished waits), in seconds.", ["kind", "provider", "model"], (s) => s.waitMs, 1 / 1000);

  new Gauge<"status">({
    name: "radar_threads",
    help: "Threads by current derived status (stalled = retrying past its deadline).",
    labelNames: ["status"],
    registers,
    collect() {
      this.reset();
      const counts = new Map(current().threads.map((row) => [row.status, row.value]));
      // Every status is present, at 0 when empty, so dashboards and alerts see explicit zeros.
      for (const status of THREAD_STATUSES) this.set({ status }, counts.get(status) ?? 0);
    },
  });

  new Gauge<"kind" | "provider" | "model">({
    name: "radar_incidents_open",
    help: "Open incidents (many threads hitting one wall), by kind, provider and model.",
    labelNames: ["kind", "provider", "model"],
    registers,
    collect() {
      this.reset();
      for (const { value, ...labels } of current().incidentsOpen) this.set(labels, value);
    },
  });
  counter("radar_incidents_total", "Incidents opened since the radar started keeping them.", [], (s) => [{ value: s.incidentsTotal }]);

  // `result`, as for directives: where each alert stands (the label set stays low-cardinality).
  new Gauge<"result">({
    name: "radar_alert_outbox",
    help: "Alerts in the outbox by result: pending (waiting to be delivered or retried), delivered, failed.",
    labelNames: ["result"],
    registers,
    collect() {
      this.reset();
      const counts = new Map(current().alertOutbox.map((row) => [row.result, row.value]));
      for (const result of ALERT_STATES) this.set({ result }, counts.get(result) ?? 0);
    },
  });
  new Gauge({
    name: "radar_alert_oldest_pending_seconds",
    help: "How long the oldest alert still pending has waited (0 when none is): a growing value means the outbox is backing up.",
    registers,
    collect() {
      this.set(current().alertOldestPendingS);
    },
  });

  if (instance) {
    new Gauge({
      name: "radar_watchdog_leader",
      help: "1 when this instance runs the watchdog (the one leader among instances sharing a PostgreSQL database; always 1 on SQLite), else 0.",
      registers,
      collect() {
        this.set(instance.watchdogLeader() ? 1 : 0);
      },
    });
  }
  const histogram = (name: string, help: string, rows: (s: MetricsSnapshot) => HistogramRow[]) =>
    new Histogram<"kind" | "provider">({
      name,
      help,
      labelNames: ["kind", "provider"],
      buckets: BUCKETS_S,
      registers,
      collect() {
        loadHistogram(this, rows(current()));
      },
    });
  histogram("radar_retry_advised_delay_seconds", "Delay the provider advised before a retry (longest valid hint), in seconds.", (s) => s.advisedDelay);
  histogram("radar_retry_actual_gap_seconds", "Time from a retry notice to the retry actually starting, in seconds.", (s) => s.actualGap);

  return {
    registry,
    contentType: registry.contentType,
    /** One database snapshot per scrape, shared by every metric's collect(). */
    async scrape(): Promise<string> {
      snapshot = await read();
      try {
        return await registry.metrics();
      } finally {
        snapshot = null;
      }
    },
    /** The counters' values exposed so far: `exposedBefore` for a registry that replaces this one. */
    exposed: (): ExposedCounters => JSON.stringify([...highest]),
  };
}

/** What only the serving process knows at a scrape (InstanceFacts), as plain data: it goes to the read worker with the request. */
export interface InstanceState {
  watchdogLeader: boolean;
}

export interface MetricsExposition {
  text: string;
  contentType: string;
  /** The counters' values exposed so far, for the next scrape's `exposedBefore`. */
  exposed: ExposedCounters;
}

const sharedForExposition = shared<{
  exposition?: {
    metrics: ReturnType<typeof createMetricsRegistry>;
    /** What the scrape under way renders: its snapshot and the serving process's state. */
    scraping: { snapshot: MetricsSnapshot | null; instance: InstanceState };
    /** The scrape under way, or the last one: the next waits for it. */
    last: Promise<unknown>;
  };
}>("exposition", () => ({}));

/**
 * `snapshot` as Prometheus text, rendered by this thread's one registry: on SQLite the read
 * worker's (lib/db/reads.ts), so that the text's formatting (prom-client's: most of the 7.7 ms of
 * the ingest thread's CPU a scrape took at 1M events when it ran there, on code a scrape every
 * 15 s never gets to optimise) never runs on the thread that ingests. The registry is made at the
 * first scrape, from the counters' values the serving thread last received (`exposedBefore`): a
 * read worker started again after a crash never exposes less than the one before it did.
 * Scrapes render one after another, each with its own snapshot and state.
 */
export function renderMetrics(snapshot: MetricsSnapshot, instance: InstanceState, exposedBefore: ExposedCounters | null): Promise<MetricsExposition> {
  let thisThread = sharedForExposition.exposition;
  if (!thisThread) {
    const scraping = { snapshot: null as MetricsSnapshot | null, instance };
    const facts: InstanceFacts = { watchdogLeader: () => scraping.instance.watchdogLeader };
    const metrics = createMetricsRegistry(() => scraping.snapshot!, facts, exposedBefore);
    thisThread = sharedForExposition.exposition = { metrics, scraping, last: Promise.resolve() };
  }
  const { metrics, scraping } = thisThread;
  const rendered = thisThread.last.then(async (): Promise<MetricsExposition> => {
    scraping.snapshot = snapshot;
    scraping.instance = instance;
    try {
      return { text: await metrics.scrape(), contentType: metrics.contentType, exposed: metrics.exposed() };
    } finally {
      scraping.snapshot = null;
    }
  });
  thisThread.last = rendered.catch(() => undefined);
  return rendered;
}
