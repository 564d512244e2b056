/**
 * A scriptable mock model provider for end-to-end tests with real agents, on 127.0.0.1.
 *
 * - OpenAI Responses API: `POST /v1/responses` → SSE (response.created, response.output_item.added,
 *   response.output_text.delta, response.output_item.done, response.completed). This is all
 *   real Codex calls when its config.toml points `base_url` at `<url>/v1` with wire_api "responses".
 * - Anthropic Messages API: `POST /v1/messages` → SSE (message_start, content_block_start,
 *   content_block_delta, content_block_stop, message_delta, message_stop) or JSON when the request
 *   is not streaming; `POST /v1/messages/count_tokens` answers a token count. Real Claude Code
 *   calls it when ANTHROPIC_BASE_URL is `<url>`.
 *
 * Each API has a queue of scripted replies, consumed one per model request; when the queue is
 * empty the default reply (success unless changed) is used. Every request is recorded with its
 * receive time and the reply it got.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { PATIENCE_MS } from "./patience";

export type ProviderApi = "openai" | "anthropic";

export type MockReply =
  | { kind: "ok"; text?: string }
  | {
      kind: "error";
      status: number;
      /** `Retry-After` header value (delta-seconds or an HTTP date); omitted when undefined. */
      retryAfter?: number | string;
      /** Provider error code / type: OpenAI `error.code`, Anthropic `error.type`. */
      code?: string;
      message?: string;
      headers?: Record<string, string>;
      /** Headers and the whole JSON body made when the request arrives (replaces the default body). */
      render?: (receivedAt: number) => { headers: Record<string, string>; body: unknown };
    }
  /** Accepts the request and never answers (until the client disconnects or the mock closes). */
  | { kind: "hang" };

export interface RecordedRequest {
  api: ProviderApi | "other";
  method: string;
  path: string;
  at: number;
  headers: http.IncomingHttpHeaders;
  body: any;
  /** What the mock answered (null for requests that are not model calls). */
  reply: MockReply | null;
  /** True when the request counted as a model call (consumed the script). */
  modelCall: boolean;
}

export interface MockProvider {
  /** http://127.0.0.1:PORT — ANTHROPIC_BASE_URL for Claude Code. */
  url: string;
  /** http://127.0.0.1:PORT/v1 — base_url for a Codex model provider. */
  openaiBaseUrl: string;
  requests: RecordedRequest[];
  /** Model calls of one API, in order. */
  calls(api: ProviderApi): RecordedRequest[];
  enqueue(api: ProviderApi, ...replies: MockReply[]): void;
  setDefault(api: ProviderApi, reply: MockReply): void;
  /** Resolves when at least `count` model calls of `api` arrived. */
  waitForCalls(api: ProviderApi, count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Writes a line per request to stderr when set (debugging). */
  verbose: boolean;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Reply builders

export const ok = (text = "Hi! (mock reply)"): MockReply => ({ kind: "ok", text });

/** 429 with `Retry-After` (seconds) and the provider's own rate-limit error body. */
export function rateLimited(retryAfterSeconds?: number, message?: string): MockReply {
  return { kind: "error", status: 429, retryAfter: retryAfterSeconds, code: "rate_limit_exceeded", message };
}

/**
 * The usage-limit refusal Codex knows (as ChatGPT's backend sends it): 429 `usage_limit_reached`
 * with the reset in the body and the x-codex-* window headers, as the capture
 * codex-ratelimit-appserver-usage-limit carried them: the primary window full, resetting
 * `inSeconds` after the request arrived (whenever the agent gets to make it). Codex answers it
 * with `account/rateLimits/updated` and a failed turn ("… try again at 5:59 PM."), no retry.
 */
export function usageLimited(inSeconds: number): MockReply {
  return {
    kind: "error",
    status: 429,
    render(receivedAt) {
      const resetsAt = Math.floor(receivedAt / 1000) + inSeconds;
      return {
        headers: {
          "retry-after": String(inSeconds),
          "x-codex-primary-used-percent": "100",
          "x-codex-primary-window-minutes": "300",
          "x-codex-primary-reset-after-seconds": String(inSeconds),
          "x-codex-primary-reset-at": String(resetsAt),
          "x-codex-secondary-used-percent": "12",
          "x-codex-secondary-window-minutes": "10080",
          "x-codex-secondary-reset-after-seconds": "400000",
          "x-codex-secondary-reset-at": String(resetsAt + 400_000),
          "x-codex-plan-type": "plus",
          "x-codex-credits-has-credits": "false",
          "x-codex-credits-unlimited": "false",
          "x-codex-credits-balance": "0",
          "x-codex-rate-limit-reached-type": "rate_limit_reached",
        },
        body: {
          error: { type: "usage_limit_reached", code: "usage_limit_reached", message: "The usage limit has been reached", plan_type: "plus", resets_at: resetsAt, resets_in_seconds: inSeconds },
        },
      };
    },
  };
}

/** OpenAI 503 `server_is_overloaded`. */
export function overloaded503(retryAfterSeconds?: number): MockReply {
  return {
    kind: "error",
    status: 503,
    retryAfter: retryAfterSeconds,
    code: "server_is_overloaded",
    message: "Selected model is at capacity. Please try a different model.",
  };
}

/** Anthropic 529 `overloaded_error`. */
export function overloaded529(retryAfterSeconds?: number): MockReply {
  return { kind: "error", status: 529, retryAfter: retryAfterSeconds, code: "overloaded_error", message: "Overloaded" };
}

export const hang = (): MockReply => ({ kind: "hang" });

// ---------------------------------------------------------------------------------------------

let counter = 0;
const rid = (prefix: string) => `${prefix}_mock_${Date.now().toString(16)}${(++counter).toString(16).padStart(4, "0")}`;

function openAiErrorBody(reply: Extract<MockReply, { kind: "error" }>) {
  const code =
    reply.code ?? (reply.status === 429 ? "rate_limit_exceeded" : reply.status === 503 ? "server_is_overloaded" : "server_error");
  const message =
    reply.message ??
    (reply.status === 429
      ? "Rate limit reached for gpt-5.5 in organization org-mock on tokens per min (TPM): Limit 30000, Used 30000, Requested 1000."
      : reply.status === 503
        ? "Selected model is at capacity. Please try a different model."
        : "The server had an error while processing your request.");
  const type = reply.status === 429 ? "requests" : "server_error";
  return { error: { message, type, param: null, code } };
}

function anthropicErrorBody(reply: Extract<MockReply, { kind: "error" }>) {
  const type =
    reply.code ??
    (reply.status === 429
      ? "rate_limit_error"
      : reply.status === 529
        ? "overloaded_error"
        : reply.status === 503
          ? "overloaded_error"
          : "api_error");
  // OpenAI-style codes map onto Anthropic's error types.
  const mapped = type === "rate_limit_exceeded" ? "rate_limit_error" : type === "server_is_overloaded" ? "overloaded_error" : type;
  const message =
    reply.message ??
    (mapped === "rate_limit_error"
      ? "This request would exceed your organization's rate limit. Please try again later."
      : mapped === "overloaded_error"
        ? "Overloaded"
        : "Internal server error");
  return { type: "error", error: { type: mapped, message }, request_id: rid("req") };
}

function sse(res: http.ServerResponse, events: { event: string; data: unknown }[]) {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-request-id": rid("req"),
  });
  for (const e of events) res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
  res.end();
}

function chunks(text: string, size = 6): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [""];
}

function openAiStream(res: http.ServerResponse, body: any, text: string) {
  const responseId = rid("resp");
  const itemId = rid("msg");
  const model = typeof body?.model === "string" ? body.model : "gpt-5.5";
  const response = { id: responseId, object: "response", created_at: Math.floor(Date.now() / 1000), model, status: "in_progress", output: [] };
  const item = { type: "message", id: itemId, status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] };
  const events: { event: string; data: unknown }[] = [
    { event: "response.created", data: { type: "response.created", sequence_number: 0, response } },
    {
      event: "response.output_item.added",
      data: { type: "response.output_item.added", sequence_number: 1, output_index: 0, item: { ...item, status: "in_progress", content: [] } },
    },
  ];
  for (const delta of chunks(text)) {
    events.push({
      event: "response.output_text.delta",
      data: { type: "response.output_text.delta", sequence_number: events.length, item_id: itemId, output_index: 0, content_index: 0, delta },
    });
  }
  events.push({ event: "response.output_item.done", data: { type: "response.output_item.done", sequence_number: events.length, output_index: 0, item } });
  events.push({
    event: "response.completed",
    data: {
      type: "response.completed",
      sequence_number: events.length,
      response: {
        ...response,
        status: "completed",
        output: [item],
        usage: {
          input_tokens: 1000,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 8,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 1008,
        },
      },
    },
  });
  sse(res, events);
}

function anthropicReply(res: http.ServerResponse, body: any, text: string) {
  const id = rid("msg");
  const model = typeof body?.model === "string" ? body.model : "claude-sonnet-4-5";
  const usage = { input_tokens: 100, output_tokens: 8, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (!body?.stream) {
    res.writeHead(200, { "content-type": "application/json", "request-id": rid("req") });
    res.end(
      JSON.stringify({
        id,
        type: "message",
        role: "assistant",
        model,
        content: [{ type: "text", text }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage,
      }),
    );
    return;
  }
  const events: { event: string; data: unknown }[] = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
      },
    },
    { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
  ];
  for (const delta of chunks(text)) {
    events.push({ event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: delta } } });
  }
  events.push({ event: "content_block_stop", data: { type: "content_block_stop", index: 0 } });
  events.push({
    event: "message_delta",
    data: { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 8 } },
  });
  events.push({ event: "message_stop", data: { type: "message_stop" } });
  sse(res, events);
}

function readJson(req: http.IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const text = Buffer.concat(parts).toString("utf8");
      try {
        resolve(text ? JSON.parse(text) : null);
      } catch {
        resolve(text);
      }
    });
    req.on("error", () => resolve(null));
  });
}

export async function startMockProvider(options: { verbose?: boolean } = {}): Promise<MockProvider> {
  const queues: Record<ProviderApi, MockReply[]> = { openai: [], anthropic: [] };
  const defaults: Record<ProviderApi, MockReply> = { openai: ok(), anthropic: ok() };
  const requests: RecordedRequest[] = [];
  const waiters = new Set<() => void>();
  const hanging = new Set<http.ServerResponse>();

  const server = http.createServer(async (req, res) => {
    const at = Date.now();
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const body = await readJson(req);
    const path = url.pathname;
    let api: ProviderApi | "other" = "other";
    let modelCall = false;
    if (req.method === "POST" && /\/responses$/.test(path)) {
      api = "openai";
      modelCall = true;
    } else if (req.method === "POST" && /\/messages$/.test(path)) {
      api = "anthropic";
      modelCall = true;
    } else if (/\/messages\/count_tokens$/.test(path)) {
      api = "anthropic";
    }
    const reply = modelCall ? (queues[api as ProviderApi].shift() ?? defaults[api as ProviderApi]) : null;
    const record: RecordedRequest = { api, method: req.method ?? "GET", path, at, headers: req.headers, body, reply, modelCall };
    requests.push(record);
    if (provider.verbose) process.stderr.write(`[mock] ${new Date(at).toISOString()} ${req.method} ${path} → ${reply ? JSON.stringify(reply) : "(aux)"}\n`);
    for (const wake of [...waiters]) wake();

    if (!modelCall) {
      if (/count_tokens$/.test(path)) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ input_tokens: 100 }));
        return;
      }
      if (req.method === "GET" && /\/models$/.test(path)) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [], models: [] }));
        return;
      }
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `mock provider: no route ${req.method} ${path}`, type: "not_found" } }));
      return;
    }

    if (reply!.kind === "hang") {
      hanging.add(res);
      res.on("close", () => hanging.delete(res));
      return;
    }
    if (reply!.kind === "error") {
      const rendered = reply!.render?.(at);
      const headers: Record<string, string> = { "content-type": "application/json", ...(reply!.headers ?? {}), ...(rendered?.headers ?? {}) };
      if (reply!.retryAfter !== undefined) headers["retry-after"] = String(reply!.retryAfter);
      headers[api === "anthropic" ? "request-id" : "x-request-id"] = rid("req");
      if (api === "anthropic" && reply!.status === 429) headers["anthropic-ratelimit-requests-remaining"] = "0";
      res.writeHead(reply!.status, headers);
      res.end(JSON.stringify(rendered ? rendered.body : api === "anthropic" ? anthropicErrorBody(reply!) : openAiErrorBody(reply!)));
      return;
    }
    const text = reply!.text ?? "Hi! (mock reply)";
    if (api === "openai") openAiStream(res, body, text);
    else anthropicReply(res, body, text);
  });
  server.keepAliveTimeout = 1_000;

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  const calls = (api: ProviderApi) => requests.filter((r) => r.api === api && r.modelCall);

  const provider: MockProvider = {
    url,
    openaiBaseUrl: `${url}/v1`,
    requests,
    verbose: options.verbose ?? process.env.MOCK_PROVIDER_VERBOSE === "1",
    calls,
    enqueue(api, ...replies) {
      queues[api].push(...replies);
    },
    setDefault(api, reply) {
      defaults[api] = reply;
    },
    waitForCalls(api, count, timeoutMs = PATIENCE_MS) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const list = calls(api);
          if (list.length >= count) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(list);
            return true;
          }
          return false;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`mock provider: expected ${count} ${api} call(s) within ${timeoutMs} ms, got ${calls(api).length}`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return provider;
}
