/**
 * An agent instrumented only with the OpenTelemetry GenAI semantic conventions, its export built
 * by the OpenTelemetry JS SDK (BasicTracerProvider, the OTLP/HTTP JSON trace exporter) and caught
 * by a receiver on 127.0.0.1: two 429s then an answer are one recovered episode of three calls.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replay, type RadarEvent } from "../retry";
import { normalizeBatch, withoutIgnored } from "./batch";
import { otlpItems } from "./otlp";

/** OpenTelemetry's SpanKind.CLIENT and SpanStatusCode.ERROR. */
const CLIENT = 2;
const ERROR = 2;

let receiver: http.Server;
let url: string;
const bodies: unknown[] = [];

beforeAll(async () => {
  receiver = http.createServer((request, response) => {
    let text = "";
    request.on("data", (chunk) => (text += chunk));
    request.on("end", () => {
      bodies.push(JSON.parse(text));
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

const T0 = Date.UTC(2026, 11, 1, 9, 0, 0);

interface Call {
  at: number;
  ms: number;
  status?: number;
}

/** One chat call per span, as an instrumented SDK records it; the failures with error.type, the HTTP status, span status and the exception event. */
async function exportCalls(service: string, conversation: string, calls: Call[]): Promise<unknown[]> {
  bodies.length = 0;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": service }),
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  const tracer = provider.getTracer("my-agent.genai", "1.0.0");
  for (const call of calls) {
    const span = tracer.startSpan("chat gpt-4.1", {
      kind: CLIENT,
      startTime: T0 + call.at,
      attributes: { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4.1", "gen_ai.conversation.id": conversation },
    });
    if (call.status) {
      span.setAttributes({ "error.type": String(call.status), "http.response.status_code": call.status });
      span.addEvent("gen_ai.client.operation.exception", { "exception.type": "RateLimitError", "exception.message": "Rate limit reached for gpt-4.1" }, T0 + call.at + call.ms);
      span.setStatus({ code: ERROR, message: "Rate limit reached for gpt-4.1" });
    } else span.setAttributes({ "gen_ai.response.model": "gpt-4.1-2025-04-14" });
    span.end(T0 + call.at + call.ms);
  }
  await provider.forceFlush();
  await provider.shutdown();
  return [...bodies];
}

function thread(bodiesSent: unknown[]) {
  const events: RadarEvent[] = [];
  for (const body of bodiesSent) {
    const batch = normalizeBatch("otlp", otlpItems("traces", body).items, { receivedAt: T0 + 60_000 });
    expect(batch.rejected).toEqual([]);
    events.push(...withoutIgnored(batch.lines).lines.map((l, i) => ({ ...l.event!, seq: events.length + i })));
  }
  return { events, state: replay(events, T0 + 60_000) };
}

describe("an agent instrumented with the GenAI semantic conventions", () => {
  it("two 429s then an answer: a recovered rate-limit episode of three calls, its thread the conversation", async () => {
    const sent = await exportCalls("my-agent", "conv-42", [
      { at: 0, ms: 300, status: 429 },
      { at: 2_300, ms: 280, status: 429 },
      { at: 6_600, ms: 900 },
    ]);
    const { events, state } = thread(sent);
    expect(new Set(events.map((e) => e.threadId))).toEqual(new Set(["conv-42"]));
    expect(events[0]).toMatchObject({ agent: "my-agent", provider: "openai", model: "gpt-4.1" });
    expect(state.status).toBe("recovered");
    expect(state.episode).toMatchObject({ kind: "rate_limit", outcome: "recovered", attemptsMade: 3 });
    expect(state.episode!.attempts.map((a) => [a.n, a.httpStatus, a.startedAt! - a.noticeAt])).toEqual([[1, 429, 2_000], [2, 429, 4_020]]);
  });

  it("without a conversation id, the trace is the thread", () => {
    const span = (spanId: string, at: number, status: number | null) => ({
      signal: "traces",
      resource: { "service.name": "my-agent" },
      scope: null,
      record: {
        traceId: "5b8efff798038103d269b633813fc60c",
        spanId,
        name: "chat",
        startTimeUnixNano: String(BigInt(T0 + at) * 1_000_000n),
        endTimeUnixNano: String(BigInt(T0 + at + 200) * 1_000_000n),
        attributes: [{ key: "gen_ai.operation.name", value: { stringValue: "chat" } }, ...(status ? [{ key: "error.type", value: { stringValue: String(status) } }] : [])],
        status: status ? { code: ERROR } : {},
      },
    });
    const batch = normalizeBatch("otlp", [span("a1", 0, 503), span("a2", 1_000, null)], { receivedAt: T0 + 5_000 });
    const events = withoutIgnored(batch.lines).lines.map((l, seq) => ({ ...l.event!, seq }));
    expect(new Set(events.map((e) => e.threadId))).toEqual(new Set(["5b8efff798038103d269b633813fc60c"]));
    expect(replay(events, T0 + 5_000).episode).toMatchObject({ kind: "capacity", outcome: "recovered", attemptsMade: 2 });
  });

  it("a failure it does not retry is no episode; spans without gen_ai attributes are ignored", async () => {
    const sent = await exportCalls("my-agent", "conv-43", [{ at: 0, ms: 300, status: 429 }]);
    expect(thread(sent).state).toMatchObject({ status: "running", episode: null });
    const other = normalizeBatch("otlp", [{ signal: "traces", resource: { "service.name": "web" }, scope: null, record: { name: "GET /", traceId: "ab", startTimeUnixNano: "1", endTimeUnixNano: "2" } }], { receivedAt: T0 });
    expect(withoutIgnored(other.lines)).toEqual({ lines: [], ignored: 1 });
  });
});
