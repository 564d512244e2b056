import { OTLPLogExporter as JsonExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as ProtobufExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter } from "@opentelemetry/sdk-logs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, threadDetail, type RunningServer } from "../support/server";

/**
 * Real OpenTelemetry SDK exporters (the JavaScript SDK Claude Code itself exports with) sending
 * Claude Code–shaped log records to the built app, unchanged: over JSON, and over protobuf
 * through an encoder independent of the server's decoder (the SDK writes protobuf by hand; the
 * server decodes with protobufjs). The same records give the same thread either way.
 */
let server: RunningServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

const T0 = Date.now() - 30_000;

/** A prompt whose request gave up after three overloaded attempts, as Claude Code logs it. */
async function export529GiveUp(exporter: LogRecordExporter, session: string) {
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ "service.name": "claude-code", "service.version": "2.1.197" }),
    processors: [new BatchLogRecordProcessor({ exporter })],
  });
  const logger = provider.getLogger("com.anthropic.claude_code.events", "2.1.197");
  const common = { "session.id": session, "prompt.id": "prompt-1", "terminal.type": "xterm" };
  logger.emit({ timestamp: T0, body: "claude_code.user_prompt", attributes: { ...common, "event.name": "user_prompt", "event.sequence": 0, prompt_length: "6" } });
  logger.emit({
    timestamp: T0 + 6_000,
    body: "claude_code.api_error",
    attributes: { ...common, "event.name": "api_error", "event.sequence": 1, model: "claude-sonnet-4-5", error: "Overloaded", status_code: "529", attempt: 3, duration_ms: 812 },
  });
  logger.emit({
    timestamp: T0 + 6_001,
    body: "claude_code.api_retries_exhausted",
    attributes: { ...common, "event.name": "api_retries_exhausted", "event.sequence": 2, status_code: "529", error: "Overloaded", total_attempts: 3, total_retry_duration_ms: 4_500 },
  });
  await provider.forceFlush();
  await provider.shutdown();
}

/** What must not depend on the encoding: the thread, its episodes and its events as normalized. */
function essence(detail: Awaited<ReturnType<typeof threadDetail>>) {
  const { thread, episodes, events } = detail;
  return {
    thread: { status: thread.status, agent: thread.agent, provider: thread.provider, model: thread.model, lastError: thread.lastError, retry: thread.retry },
    episodes: episodes.map(({ seq, kind, outcome, outcomeCode, startedAt, endedAt, attempts }: Record<string, unknown>) => ({ seq, kind, outcome, outcomeCode, startedAt, endedAt, attempts })),
    events: events.map(({ type, nativeType, format, at, turnId, attempt, maxAttempts, delayMs, kind, httpStatus, code, message }: Record<string, unknown>) =>
      ({ type, nativeType, format, at, turnId, attempt, maxAttempts, delayMs, kind, httpStatus, code, message })),
  };
}

describe("an OpenTelemetry SDK exporter's output, unchanged", () => {
  it("over JSON and over protobuf gives the same thread", async () => {
    const headers = { authorization: `Bearer ${server.token}` };
    const run = Date.now().toString(36);
    await export529GiveUp(new JsonExporter({ url: `${server.url}/v1/logs`, headers }), `json-${run}`);
    await export529GiveUp(new ProtobufExporter({ url: `${server.url}/v1/logs`, headers }), `protobuf-${run}`);
    const json = await threadDetail(server, `json-${run}`);
    const protobuf = await threadDetail(server, `protobuf-${run}`);
    expect(json.thread).toMatchObject({ status: "failed", agent: "claude-code" });
    expect(json.events.map((e: { type: string }) => e.type)).toEqual(["turn.started", "retry", "turn.failed"]);
    expect(essence(protobuf)).toEqual(essence(json));
  });

  it("answers a protobuf export in protobuf; bytes that are no export request are a 400", async () => {
    const empty = await fetch(`${server.url}/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/x-protobuf", authorization: `Bearer ${server.token}` },
      body: new Uint8Array(),
    });
    expect(empty.status).toBe(200);
    expect(empty.headers.get("content-type")).toBe("application/x-protobuf");
    // ExportTraceServiceResponse without a partial success: no fields, no bytes.
    expect((await empty.arrayBuffer()).byteLength).toBe(0);
    const garbage = await fetch(`${server.url}/v1/logs`, {
      method: "POST",
      headers: { "content-type": "application/x-protobuf", authorization: `Bearer ${server.token}` },
      body: new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]),
    });
    expect(garbage.status).toBe(400);
  });
});
