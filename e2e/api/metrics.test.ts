import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { incidentEvents } from "@/lib/insights/incident-fixture";
import { get, post, startServer, type RunningServer } from "../support/server";

/**
 * GET /api/metrics against the built app after the known incident, read by a strict parser of
 * the Prometheus text exposition format 0.0.4: every line must parse, every sample must belong
 * to a declared family, histograms must be cumulative and end in +Inf = _count.
 */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Family {
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  help: string | null;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function parseValue(text: string, line: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (text === "NaN") return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value in: ${line}`);
  return Number(text);
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf("=", i);
    const name = text.slice(i, eq);
    if (eq < 0 || !LABEL_NAME.test(name) || text[eq + 1] !== '"') throw new Error(`bad label in: ${line}`);
    let value = "";
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === "\\") {
        const next = text[++j];
        if (next === "n") value += "\n";
        else if (next === "\\" || next === '"') value += next;
        else throw new Error(`bad escape in: ${line}`);
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`unterminated label value in: ${line}`);
    if (name in labels) throw new Error(`duplicate label ${name} in: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ",") i++;
    else if (i < text.length) throw new Error(`expected , between labels in: ${line}`);
  }
  return labels;
}

function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a newline");
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const familyOf = (name: string) => {
    if (families.has(name)) return families.get(name)!;
    const base = name.replace(/_(bucket|sum|count)$/, "");
    const family = families.get(base);
    if (family && (family.type === "histogram" || family.type === "summary")) return family;
    throw new Error(`sample ${name} has no # TYPE before it`);
  };
  for (const line of text.slice(0, -1).split("\n")) {
    if (line === "") continue;
    const comment = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (comment) {
      const [, keyword, name, rest] = comment;
      if (!METRIC_NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      const family = families.get(name) ?? { type: "untyped", help: null, samples: [] };
      if (keyword === "TYPE") {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest)) throw new Error(`bad type in: ${line}`);
        if (family.samples.length) throw new Error(`TYPE after samples in: ${line}`);
        family.type = rest as Family["type"];
      } else family.help = rest;
      families.set(name, family);
      continue;
    }
    if (line.startsWith("#")) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(line);
    if (!sample) throw new Error(`unparseable line: ${line}`);
    const [, name, labelText, valueText] = sample;
    const labels = parseLabels(labelText ?? "", line);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`duplicate series: ${line}`);
    seen.add(key);
    familyOf(name).samples.push({ name, labels, value: parseValue(valueText, line) });
  }
  for (const [name, family] of families) {
    if (family.type !== "histogram") continue;
    const series = new Map<string, Sample[]>();
    for (const s of family.samples.filter((s) => s.name === `${name}_bucket`)) {
      const { le, ...rest } = s.labels;
      if (le === undefined) throw new Error(`${name}_bucket without le`);
      const key = JSON.stringify(Object.entries(rest).sort());
      series.set(key, [...(series.get(key) ?? []), s]);
    }
    for (const [key, buckets] of series) {
      const values = buckets.map((b) => b.value);
      if (values.some((v, i) => i > 0 && v < values[i - 1])) throw new Error(`${name}${key}: buckets are not cumulative`);
      const inf = buckets.at(-1)!;
      const count = family.samples.find((s) => s.name === `${name}_count` && JSON.stringify(Object.entries(s.labels).sort()) === key);
      if (inf.labels.le !== "+Inf" || !count || count.value !== inf.value) throw new Error(`${name}${key}: +Inf bucket must equal _count`);
    }
  }
  return families;
}

const T0 = Math.floor((Date.now() - 2 * 86_400_000) / 60_000) * 60_000;
let server: RunningServer;

beforeAll(async () => {
  server = await startServer();
  const events = incidentEvents(T0);
  expect((await post(server, "/api/v1/events", events)).body.accepted).toBe(events.length);
});
afterAll(async () => {
  await server?.stop();
});

async function scrape(): Promise<Map<string, Family>> {
  const response = await server.fetch(`${server.url}/api/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parsePrometheusText(await response.text());
}

const value = (families: Map<string, Family>, name: string, labels: Record<string, string>) =>
  families.get(name.replace(/_(bucket|sum|count)$/, ""))?.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length)?.value;

describe("the strict parser", () => {
  it.each([
    ["a sample without TYPE", "x 1\n"],
    ["a bad value", "# TYPE x gauge\nx one\n"],
    ["an unterminated label", '# TYPE x gauge\nx{a="1} 1\n'],
    ["a duplicate series", "# TYPE x gauge\nx 1\nx 2\n"],
    ["a non-cumulative histogram", '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'],
    ["no final newline", "# TYPE x gauge\nx 1"],
  ])("rejects %s", (_name, text) => expect(() => parsePrometheusText(text)).toThrow());
});

describe("GET /api/metrics", () => {
  it("declares every family with its type and help", async () => {
    const families = await scrape();
    expect(Object.fromEntries([...families].map(([name, f]) => [name, f.type]))).toEqual({
      radar_retry_notices_total: "counter",
      radar_episodes_total: "counter",
      radar_directives_total: "counter",
      radar_retry_early_attempts_total: "counter",
      radar_retry_attempts_total: "counter",
      radar_retry_wait_seconds_total: "counter",
      radar_threads: "gauge",
      radar_incidents_open: "gauge",
      radar_incidents_total: "counter",
      radar_alert_outbox: "gauge",
      radar_alert_oldest_pending_seconds: "gauge",
      radar_watchdog_leader: "gauge",
      radar_retry_advised_delay_seconds: "histogram",
      radar_retry_actual_gap_seconds: "histogram",
    });
    for (const family of families.values()) expect(family.help).toBeTruthy();
  });

  it.each([
    ["radar_retry_notices_total", { kind: "rate_limit", provider: "openai", model: "gpt-5", agent: "codex" }, 2],
    ["radar_retry_notices_total", { kind: "capacity", provider: "openai", model: "gpt-5-mini", agent: "codex" }, 2],
    ["radar_retry_notices_total", { kind: "rate_limit", provider: "anthropic", model: "claude-opus", agent: "claude" }, 1],
    ["radar_retry_notices_total", { kind: "transport", provider: "anthropic", model: "claude-opus", agent: "claude" }, 2],
    ["radar_episodes_total", { outcome: "recovered", kind: "rate_limit", provider: "openai", model: "gpt-5" }, 1],
    ["radar_episodes_total", { outcome: "recovered", kind: "rate_limit", provider: "anthropic", model: "claude-opus" }, 1],
    ["radar_episodes_total", { outcome: "failed", kind: "capacity", provider: "openai", model: "gpt-5-mini" }, 1],
    ["radar_episodes_total", { outcome: "exhausted", kind: "transport", provider: "anthropic", model: "claude-opus" }, 1],
    // The exhaustion's interrupt was for a moment two days past: recorded, never sent.
    ["radar_directives_total", { kind: "interrupt", result: "expired" }, 1],
    ["radar_retry_early_attempts_total", { kind: "rate_limit", provider: "openai", agent: "codex" }, 1],
    ["radar_retry_early_attempts_total", { kind: "capacity", provider: "openai", agent: "codex" }, 1],
    ["radar_retry_early_attempts_total", { kind: "rate_limit", provider: "anthropic", agent: "claude" }, 1],
    ["radar_retry_attempts_total", { kind: "rate_limit", provider: "openai", model: "gpt-5" }, 2],
    ["radar_retry_attempts_total", { kind: "capacity", provider: "openai", model: "gpt-5-mini" }, 2],
    ["radar_retry_wait_seconds_total", { kind: "capacity", provider: "openai", model: "gpt-5-mini" }, 50],
    ["radar_retry_wait_seconds_total", { kind: "rate_limit", provider: "openai", model: "gpt-5" }, 2.23],
    ["radar_retry_advised_delay_seconds_bucket", { kind: "rate_limit", provider: "openai", le: "1" }, 0],
    ["radar_retry_advised_delay_seconds_bucket", { kind: "rate_limit", provider: "openai", le: "2" }, 2],
    ["radar_retry_advised_delay_seconds_sum", { kind: "capacity", provider: "openai" }, 60],
    ["radar_retry_actual_gap_seconds_bucket", { kind: "rate_limit", provider: "openai", le: "0.25" }, 1],
    ["radar_retry_actual_gap_seconds_bucket", { kind: "capacity", provider: "openai", le: "10" }, 1],
    ["radar_retry_actual_gap_seconds_bucket", { kind: "capacity", provider: "openai", le: "60" }, 2],
    ["radar_retry_actual_gap_seconds_count", { kind: "transport", provider: "anthropic" }, 1],
    ["radar_retry_actual_gap_seconds_sum", { kind: "capacity", provider: "openai" }, 50],
  ])("%s %j = %d", async (name, labels, expected) => {
    expect(value(await scrape(), name, labels)).toBeCloseTo(expected, 6);
  });

  it("gauges threads by the status the threads API shows, with explicit zeros", async () => {
    const families = await scrape();
    const threads = (await get(server, "/api/v1/threads?pageSize=500")).body.threads as { status: string }[];
    const counts: Record<string, number> = {};
    for (const thread of threads) counts[thread.status] = (counts[thread.status] ?? 0) + 1;
    const gauge = Object.fromEntries(families.get("radar_threads")!.samples.map((s) => [s.labels.status, s.value]));
    expect(Object.fromEntries(Object.entries(gauge).filter(([, n]) => n > 0))).toEqual(counts);
    expect(gauge.stalled).toBe(0);
  });

  it("labels are low-cardinality only: never a thread, turn or source id", async () => {
    const allowed = new Set(["kind", "provider", "model", "agent", "outcome", "status", "result", "le"]);
    const text = await (await server.fetch(`${server.url}/api/metrics`)).text();
    for (const family of parsePrometheusText(text).values()) {
      for (const sample of family.samples) for (const label of Object.keys(sample.labels)) expect(allowed).toContain(label);
    }
    for (const id of ["inc-a", "inc-b", "inc-c", "a1", "b1", "c1"]) expect(text).not.toContain(`"${id}"`);
  });

  it("reads the database at scrape time: the same numbers after a restart, new events counted at once", async () => {
    const stored = async () => (await server.fetch(`${server.url}/api/metrics`)).text();
    const before = await stored();
    await server.restart();
    const after = await stored();
    expect(after).toBe(before);
    const later = T0 + 86_400_000;
    await post(server, "/api/v1/events", [
      { id: "late-1", threadId: "inc-d", turnId: "d1", type: "turn.started", at: later, agent: "codex", provider: "openai", model: "gpt-5" },
      { id: "late-2", threadId: "inc-d", turnId: "d1", type: "retry", at: later + 1_000, attempt: 1, error: { httpStatus: 429, retryAfter: "2" } },
    ]);
    expect(value(await scrape(), "radar_retry_notices_total", { kind: "rate_limit", provider: "openai", model: "gpt-5", agent: "codex" })).toBe(3);
  });
});
