/**
 * The OpenTelemetry exports recorded from the real CLIs (lib/ingest/fixtures/otlp/RUN.md),
 * replayed to the built app through /v1/logs, /v1/traces and /v1/metrics as they arrived, with
 * traces first and one record per request, each order from a source of its own: the thread page,
 * insights and metrics show the same storm whatever the order. A `codex exec` that died in a 503
 * storm before flushing shows its capacity episode with every call it logged; Claude Code's
 * give-up shows its five attempts and its own retry time. And an agent instrumented only with the
 * GenAI semantic conventions, exported by the OpenTelemetry JS SDK: its retries are a thread too.
 */
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadOtlpCapture, REPLAY_ORDERS, replayOrder, shiftedCapture, type ReplayOrder } from "@/lib/ingest/otlp-fixtures";
import type { ThreadDetail } from "@/lib/wire/types";
import { get, startServer, type RunningServer } from "../support/server";

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

/**
 * Sends a capture's requests in `order` with a new source's token, as if recorded just now (its
 * times moved to end a second ago: the exports arrive as they did, not once the watchdog has long
 * ended what they show); returns that source.
 */
async function replayCapture(name: string, order: ReplayOrder) {
  const source = await server.addSource(`${name} ${order}`);
  const captured = loadOtlpCapture(name);
  const live = shiftedCapture(captured, Date.now() - 1_000 - captured.at(-1)!.receivedAt);
  for (const request of replayOrder(live, order)) {
    const response = await fetch(`${server.url}${request.path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${source.token}`, "content-type": "application/json" },
      body: JSON.stringify(request.body),
    });
    expect(response.status, await response.clone().text()).toBe(200);
  }
  return source;
}

/** The thread of `externalId` as `sourceId` reported it. */
async function threadOf(sourceId: string, externalId: string): Promise<ThreadDetail> {
  const response = await get(server, `/api/v1/threads/${externalId}?source=${encodeURIComponent(sourceId)}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as ThreadDetail;
}

const CASES = [
  {
    capture: "codex-otlp-exec-503-capacity",
    thread: "01a252dc-a23a-7722-acbc-5525aa1e2068",
    // Its calls stopped a second ago: retrying, until the watchdog's deadline (lib/ingest/otlp.test.ts).
    status: "retrying",
    episode: { kind: "capacity", outcome: null, attemptsMade: 4, reportedRetryMs: null },
    retries: 3,
  },
  {
    capture: "claude-otlp-429-always",
    thread: "b29498cc-5309-4cbf-93a8-d94c4ba1046f",
    status: "failed",
    episode: { kind: "rate_limit", outcome: "failed", attemptsMade: 5, reportedRetryMs: 11_032 },
    retries: 0,
  },
] as const;

describe.each(CASES)("$capture replayed to the app", ({ capture, thread, status, episode, retries }) => {
  it.each(REPLAY_ORDERS)("%s: the same thread, episode and attempts", async (order) => {
    const source = await replayCapture(capture, order);
    const view = await threadOf(source.id, thread);
    expect(view.thread.status).toBe(status);
    expect(view.episodes).toHaveLength(1);
    expect(view.episodes[0]).toMatchObject(episode);
    expect(view.episodes[0].attempts).toHaveLength(retries);
  });
});

describe("a give-up's own count and time in insights and metrics", () => {
  it("insights count the retries and the time Claude reported, Prometheus the retries", async () => {
    const source = await replayCapture("claude-otlp-429-always", "capture");
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const insights = (await get(server, `/api/v1/insights?from=${from}&to=${to}&source=${source.id}`)).body;
    expect(insights.timeLost).toEqual([expect.objectContaining({ provider: "anthropic", attempts: 4, timeLostMs: 11_032 })]);
    expect(insights.totals).toMatchObject({ attempts: 4, attemptsPerEpisode: 5, timeLostMs: 11_032 });
    expect(insights.topThreads).toEqual([expect.objectContaining({ threadId: CASES[1].thread, attempts: 4, timeLostMs: 11_032 })]);
    const metrics = await (await server.fetch("/api/metrics")).text();
    // Four sources reported this give-up (three orders above and this one): four retries each.
    const line = metrics.split("\n").find((l) => l.startsWith("radar_retry_attempts_total{") && l.includes('kind="rate_limit"') && l.includes('provider="anthropic"'));
    expect(line, metrics).toMatch(/ 16$/);
  });
});

describe("an agent instrumented only with the GenAI semantic conventions", () => {
  it("two 429s then an answer, exported by the OpenTelemetry JS SDK: a recovered episode of three calls", async () => {
    const source = await server.addSource("genai agent");
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": "support-bot" }),
      spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${server.url}/v1/traces`, headers: { authorization: `Bearer ${source.token}` } }))],
    });
    const tracer = provider.getTracer("support-bot.genai");
    const t0 = Date.now() - 60_000;
    const conversation = `conv-${t0}`;
    for (const [at, ms, status] of [[0, 300, 429], [2_300, 280, 429], [6_600, 900, 0]]) {
      const span = tracer.startSpan("chat claude-sonnet-4-5", {
        kind: 2,
        startTime: t0 + at,
        attributes: { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.conversation.id": conversation },
      });
      if (status) {
        span.setAttributes({ "error.type": String(status), "http.response.status_code": status });
        span.addEvent("gen_ai.client.operation.exception", { "exception.type": "RateLimitError", "exception.message": "rate_limit_error" }, t0 + at + ms);
        span.setStatus({ code: 2, message: "rate_limit_error" });
      }
      span.end(t0 + at + ms);
    }
    await provider.forceFlush();
    await provider.shutdown();
    const view = await threadOf(source.id, conversation);
    expect(view.thread).toMatchObject({ status: "recovered", agent: "support-bot", provider: "anthropic", model: "claude-sonnet-4-5" });
    expect(view.episodes).toEqual([expect.objectContaining({ kind: "rate_limit", outcome: "recovered", attemptsMade: 3 })]);
    expect(view.episodes[0].attempts).toHaveLength(2);
  });
});
