import { execFile } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_INGEST_BODY_BYTES, MAX_ITEMS } from "@/lib/ingest/limits";
import { MAX_COMMAND_BYTES } from "@/lib/server/http";
import { newApiKey } from "@/lib/auth/api-keys";
import { createRng } from "../../scripts/demo/random";
import { builtAction, callAction } from "../support/actions";
import { credentialFor, startServer, type RunningServer } from "../support/server";

/**
 * Hostile input against the built server, every endpoint, class by class: malformed JSON and
 * NDJSON, wrong types and out-of-range values, deep nesting, multi-MB strings, oversized bodies
 * (declared and streamed without a length), floods of tiny lines, garbage query strings, wrong
 * and oversized credentials. Every answer is below 500, every refusal is problem+json with a
 * detail, the server answers /api/health after each class, and a batch with one bad line keeps
 * its good lines.
 *
 * Seeded: RADAR_FUZZ_SEED picks the inputs (a failure prints its seed), RADAR_FUZZ_ROUNDS
 * multiplies the request counts (`npm run soak` runs more rounds; `npm test` runs one).
 */
const SEED = Number(process.env.RADAR_FUZZ_SEED ?? 13);
const ROUNDS = Math.max(1, Number(process.env.RADAR_FUZZ_ROUNDS ?? 1));
/** Requests in flight at once: enough to overlap, few enough for a 2-core machine. */
const CONCURRENCY = 4;

let server: RunningServer;
/** The heap (after a collection) once every endpoint has answered once: what the fuzz must come back to. */
let baselineHeap = 0;
/** /api/health, asked every 250 ms for the whole run: every answer and the slowest. */
const health = { asked: 0, failed: [] as string[], slowestMs: 0 };
let healthTimer: NodeJS.Timeout | undefined;
/** How far the heap may end above where it started: garbage collection is not exact. */
const HEAP_SLACK_BYTES = 32 * 1024 * 1024;

async function heapAfterCollection(): Promise<number> {
  const report = (await (await server.fetch("/api/v1/diagnostics/memory")).json()) as { collected: boolean; heapUsedBytes: number };
  expect(report.collected, "the server runs with --expose-gc").toBe(true);
  return report.heapUsedBytes;
}

beforeAll(async () => {
  server = await startServer({ NODE_OPTIONS: "--expose-gc" });
  for (const path of [...GET_PATHS, ...INGEST_PATHS]) await server.fetch(path, path.startsWith("/api/v1/ingest") || path === "/api/v1/events" ? { method: "POST", body: "", headers: { authorization: `Bearer ${server.token}` } } : {});
  baselineHeap = await heapAfterCollection();
  const ask = async () => {
    const started = performance.now();
    try {
      const response = await fetch(`${server.url}/api/health`);
      if (response.status !== 200) health.failed.push(`${response.status}`);
      await response.arrayBuffer();
    } catch (error) {
      health.failed.push((error as Error).message);
    }
    health.asked++;
    health.slowestMs = Math.max(health.slowestMs, performance.now() - started);
    healthTimer = setTimeout(ask, 250);
  };
  void ask();
});
afterAll(async () => {
  clearTimeout(healthTimer);
  await server?.stop();
});

/** The demo's seeded generator, with `int(n)` in [0, n). */
function rng(seed: number) {
  const r = createRng(seed);
  return { next: r.next, pick: r.pick, int: (n: number) => r.int(0, n - 1) };
}
type Rng = ReturnType<typeof rng>;

const WEIRD_STRINGS = ["", " ", "\u0000", "\ud800", "☃", "💥".repeat(50), "null", "NaN", "-1", "1e309", "<script>", "../../etc/passwd", "%00", "\r\n\r\n", "a".repeat(5_000), "0x1F", "2026-13-45T99:99:99Z", "Reconnecting... 99999999999/0"];
const WEIRD_NUMBERS = [0, -1, -0.5, 1.5, 1e308, -1e308, 2 ** 53 + 1, 99999999999999, 600, 99, 1e-9];

function garbageString(r: Rng): string {
  if (r.next() < 0.5) return r.pick(WEIRD_STRINGS);
  let s = "";
  const n = 1 + r.int(40);
  for (let i = 0; i < n; i++) s += String.fromCharCode(r.next() < 0.8 ? 32 + r.int(95) : r.int(0xffff));
  return s;
}

function randomValue(r: Rng, depth = 0): unknown {
  switch (r.int(depth > 2 ? 5 : 7)) {
    case 0:
      return null;
    case 1:
      return r.next() < 0.5;
    case 2:
      return r.pick(WEIRD_NUMBERS);
    case 3:
    case 4:
      return garbageString(r);
    case 5:
      return Array.from({ length: r.int(4) }, () => randomValue(r, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: r.int(4) }, () => [garbageString(r), randomValue(r, depth + 1)]));
  }
}

/** JSON text nested `depth` levels deep (built as text: JSON.stringify itself recurses). */
function nestedJson(depth: number): string {
  const half = Math.floor(depth / 2);
  return '{"n":['.repeat(half) + "1" + "]}".repeat(half);
}

const DEEP = "__deep__";
/** JSON text of `value` with every string DEEP replaced by JSON nested `depth` levels. */
function withDeep(value: unknown, depth: number): string {
  return JSON.stringify(value).replaceAll(`"${DEEP}"`, nestedJson(depth));
}

/** Every GET endpoint the fuzz sends garbage queries to. */
const GET_PATHS = ["/api/v1/threads", "/api/v1/threads/nope", "/api/v1/threads/by-key/1", "/api/v1/threads/nope/export", "/api/v1/exports/threads", "/api/v1/exports/episodes", "/api/v1/exports/nope", "/api/v1/insights", "/api/v1/directives", "/api/metrics", "/api/health"];
const INGEST_PATHS = ["/api/v1/events", "/api/v1/ingest/codex", "/api/v1/ingest/codex-exec", "/api/v1/ingest/claude"] as const;
type IngestPath = (typeof INGEST_PATHS)[number];

/** A good line of each format, on thread `thread`. */
function goodLine(path: IngestPath, thread: string, n: number): Record<string, unknown> {
  switch (path) {
    case "/api/v1/events":
      return { id: `${thread}-${n}`, threadId: thread, type: "progress", turnId: "u1" };
    case "/api/v1/ingest/codex":
      return { method: "turn/started", params: { threadId: thread, turn: { id: `u${n}` } } };
    case "/api/v1/ingest/codex-exec":
      return { type: "thread.started", thread_id: thread, n };
    case "/api/v1/ingest/claude":
      return { type: "system", subtype: "init", session_id: thread, uuid: `${thread}-${n}` };
  }
}

/** Every place in a line where a value can be wrong: [path in the line, …]. */
const FIELDS: Record<IngestPath, string[][]> = {
  "/api/v1/events": [
    ["id"], ["threadId"], ["turnId"], ["parentThreadId"], ["type"], ["at"], ["agent"], ["provider"], ["model"], ["title"], ["policy"],
    ["attempt"], ["maxAttempts"], ["delayMs"], ["willRetry"], ["progressCount"], ["error"], ["error", "httpStatus"], ["error", "code"],
    ["error", "message"], ["error", "retryAfter"], ["error", "headers"], ["error", "headers", "retry-after"], ["error", "details"],
  ],
  "/api/v1/ingest/codex": [
    ["method"], ["params"], ["params", "threadId"], ["params", "turn"], ["params", "turn", "id"], ["params", "error"], ["params", "willRetry"],
    ["params", "error", "message"], ["params", "error", "codexErrorInfo"], ["params", "rateLimits"], ["emittedAtMs"], ["id"], ["result"],
  ],
  "/api/v1/ingest/codex-exec": [["type"], ["thread_id"], ["message"], ["item"], ["item", "type"], ["item", "message"], ["error"], ["error", "message"]],
  "/api/v1/ingest/claude": [
    ["type"], ["subtype"], ["session_id"], ["uuid"], ["model"], ["attempt"], ["max_retries"], ["retry_delay_ms"], ["error_status"], ["error"],
    ["message"], ["message", "model"], ["message", "content"], ["is_error"], ["result"], ["api_error_status"], ["terminal_reason"], ["errors"],
  ],
};

const CODEX_METHODS = ["error", "turn/completed", "account/rateLimits/updated", "thread/started", "item/agentMessage/delta", "thread/status/changed"];
const EXEC_TYPES = ["error", "turn.failed", "item.completed", "turn.started"];
const CLAUDE_TYPES: [string, string | null][] = [["system", "api_retry"], ["assistant", null], ["result", "error_during_execution"], ["system", "init"]];

/** A line of the format with one field (and sometimes a neighbour) set to `value`. */
function lineWith(path: IngestPath, r: Rng, thread: string, n: number, value: () => unknown): Record<string, unknown> {
  const line = goodLine(path, thread, n);
  if (path === "/api/v1/ingest/codex") line.method = r.pick(CODEX_METHODS);
  if (path === "/api/v1/ingest/codex-exec") line.type = r.pick(EXEC_TYPES);
  if (path === "/api/v1/ingest/claude") [line.type, line.subtype] = r.pick(CLAUDE_TYPES);
  if (path === "/api/v1/events") line.type = r.pick(["retry", "turn.failed", "progress", "turn.started"]);
  for (let k = 0; k < 1 + r.int(2); k++) setPath(line, r.pick(FIELDS[path]), value());
  return line;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown) {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (typeof node[key] !== "object" || node[key] === null || Array.isArray(node[key])) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path.at(-1)!] = value;
}

/** Percent-encodes; a lone surrogate (which encodeURIComponent refuses) becomes its invalid UTF-8 bytes, garbage the server must refuse too. */
const enc = (text: string) => {
  try {
    return encodeURIComponent(text);
  } catch {
    return "%ED%A0%80";
  }
};

/**
 * A path segment: garbage, but valid UTF-8 once decoded. Next 16 answers a dynamic segment with
 * invalid percent-encoding (%ED%A0%80) with a plain 500 before any route code runs; that case
 * is left out until it can be refused earlier (see the query-string class for such bytes).
 */
const segment = (text: string) => encodeURIComponent(text.replace(/[\ud800-\udfff]/g, "\ufffd"));

const ndjson = (lines: unknown[], depth = 0) => lines.map((line) => withDeep(line, depth)).join("\n") + "\n";

interface Probe {
  method?: "GET" | "POST";
  path: string;
  body?: string | Uint8Array | ReadableStream<Uint8Array>;
  headers?: Record<string, string>;
  /** null: no credentials at all. */
  token?: string | null;
  /** Read only the head of an answer that opens (an event stream never ends); a refusal is read whole. */
  headOnly?: boolean;
}

interface Answer {
  status: number;
  type: string;
  body: any;
}

async function send(probe: Probe): Promise<Answer> {
  const token = probe.token === undefined ? credentialFor(server, probe.path) : probe.token;
  const headers: Record<string, string> = { ...(token !== null ? { authorization: `Bearer ${token}` } : {}), ...probe.headers };
  const controller = new AbortController();
  const init: RequestInit & { duplex?: "half" } = { method: probe.method ?? (probe.body === undefined ? "GET" : "POST"), headers, signal: controller.signal };
  if (probe.body !== undefined) {
    init.body = probe.body as BodyInit;
    if (probe.body instanceof ReadableStream) init.duplex = "half";
  }
  const response = await fetch(`${server.url}${probe.path}`, init);
  const type = response.headers.get("content-type") ?? "";
  // A stream that opened is not read; a refusal is, to judge it like any other.
  if (probe.headOnly && response.status < 400) {
    controller.abort();
    return { status: response.status, type, body: null };
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: judged by the checks below
  }
  return { status: response.status, type, body };
}

/**
 * Uploads `bytes` of NDJSON, with a declared length or streamed (chunked) without one, over a
 * raw connection, and reads the answer whenever it comes: a server that refuses a large body
 * answers and closes before the upload ends, so a write failing then (EPIPE, reset) is expected
 * and the answer already received is what counts.
 */
function upload(path: string, bytes: number, declared: boolean): Promise<Answer> {
  const line = Buffer.from(`${JSON.stringify(goodLine("/api/v1/events", "upload", 1))}\n`.repeat(1_000));
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const received: Buffer[] = [];
    let closed = false;
    socket.on("data", (piece) => received.push(piece));
    socket.on("error", () => {}); // the server closing on an upload it refused: judged by what arrived
    socket.on("close", () => {
      closed = true;
      const text = Buffer.concat(received).toString("utf8");
      const head = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(text);
      if (!head) return reject(new Error(`no HTTP answer (${text.length} bytes received)`));
      const type = /^content-type:\s*(.*)$/im.exec(head[2])?.[1] ?? "";
      let body: unknown = head[3];
      const chunked = /^transfer-encoding:\s*chunked/im.test(head[2]);
      const raw = chunked ? head[3].replace(/^[0-9a-f]+\r\n|\r\n[0-9a-f]+\r\n|\r\n0\r\n\r\n$/gi, "") : head[3];
      try {
        body = JSON.parse(raw);
      } catch {
        // judged as text
      }
      resolve({ status: Number(head[1]), type, body });
    });
    const headers = [`POST ${path} HTTP/1.1`, `host: ${hostname}:${port}`, `authorization: Bearer ${credentialFor(server, path)}`, "content-type: application/x-ndjson", "connection: close"];
    headers.push(declared ? `content-length: ${bytes}` : "transfer-encoding: chunked");
    socket.write(`${headers.join("\r\n")}\r\n\r\n`);
    let sent = 0;
    const write = () => {
      while (!closed && sent < bytes) {
        const piece = line.subarray(0, Math.min(line.length, bytes - sent));
        sent += piece.length;
        const ok = socket.write(declared ? piece : Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")]));
        if (!ok) return void socket.once("drain", write);
      }
      if (!closed) socket.end(declared ? "" : "0\r\n\r\n");
    };
    write();
  });
}

/**
 * What every answer must be. 431 is Node's own refusal of an oversized header block, sent
 * before any route runs (so it cannot be problem+json); it is still a clean refusal.
 */
function judge(probe: Probe, answer: Answer): string | null {
  const what = `${probe.method ?? (probe.body === undefined ? "GET" : "POST")} ${probe.path.slice(0, 120)}`;
  if (answer.status >= 500) return `${what}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`;
  // Ingestion that rejects every line answers 422 with the per-line errors instead.
  const lineErrors = answer.status === 422 && Array.isArray(answer.body?.rejected) && answer.body.rejected.length > 0 && answer.body.rejected.every((x: { error?: unknown }) => typeof x.error === "string" && x.error);
  if (answer.status >= 400 && answer.status !== 431 && !lineErrors) {
    if (!answer.type.startsWith("application/problem+json")) return `${what}: ${answer.status} answered as ${answer.type}`;
    if (typeof answer.body?.detail !== "string" || answer.body.detail.length === 0) return `${what}: ${answer.status} without a detail`;
  }
  return null;
}

/** Sends every probe (CONCURRENCY at a time) and expects every answer to pass `judge`; returns the answers. */
async function fire(probes: Probe[]): Promise<Answer[]> {
  const answers: Answer[] = new Array(probes.length);
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < probes.length) {
      const i = next++;
      try {
        answers[i] = await send(probes[i]);
        const failure = judge(probes[i], answers[i]);
        if (failure) failures.push(failure);
      } catch (error) {
        failures.push(`${probes[i].path.slice(0, 120)}: ${(error as Error).message} ${String((error as Error).cause ?? "")}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  expect(failures.slice(0, 10), `seed ${SEED}: ${failures.length} bad answers of ${probes.length}`).toEqual([]);
  await healthy();
  return answers;
}

async function healthy() {
  const response = await fetch(`${server.url}/api/health`);
  expect(response.status, server.output().slice(-2_000)).toBe(200);
}

/** A batch with good lines around one bad line keeps the good ones (on every ingest endpoint). */
/**
 * A live stream opened with an API key, once its `hello` came: `ended` resolves with its last
 * event when the server ends it; `heardMore()` resolves at the next `threads` notice after the
 * call, and fails if the stream ends first.
 */
async function openFuzzStream(key: string) {
  const response = await fetch(`${server.url}/api/v1/stream`, { headers: { authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let done = false;
  const waiters: (() => void)[] = [];
  const ended = (async () => {
    for (;;) {
      const read = await reader.read().catch(() => ({ value: undefined, done: true as const }));
      if (read.done) break;
      text += read.value;
      for (const wake of waiters.splice(0)) wake();
    }
    done = true;
    for (const wake of waiters.splice(0)) wake();
    return text.split("\n\n").filter((block) => block.startsWith("event: ")).at(-1)!;
  })();
  const until = async (holds: () => boolean, what: string) => {
    while (!holds()) {
      if (done) throw new Error(`the stream ended before ${what}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const notices = () => text.split("event: threads").length - 1;
  await until(() => text.includes("event: hello"), "its hello");
  return {
    ended,
    heardMore: () => {
      const before = notices();
      return until(() => notices() > before, "the next threads notice");
    },
  };
}

async function keepsGoodLines(tag: string, bad: (path: IngestPath) => unknown, depth = 0) {
  for (const path of INGEST_PATHS) {
    const thread = `keep-${tag}-${path.split("/").at(-1)}`;
    const [answer] = await fire([{ path, body: ndjson([goodLine(path, thread, 1), bad(path), goodLine(path, thread, 2)], depth), headers: { "content-type": "application/x-ndjson" } }]);
    expect(answer.status, JSON.stringify(answer.body).slice(0, 500)).toBe(200);
    expect(answer.body.accepted + answer.body.duplicates, `${path}: ${JSON.stringify(answer.body).slice(0, 500)}`).toBe(2);
    expect(answer.body.rejected.map((x: { index: number }) => x.index)).toEqual([1]);
    expect(answer.body.rejected[0].error.length).toBeGreaterThan(0);
  }
}

const POST_TARGETS = [...INGEST_PATHS, "/api/v1/ingest/bogus", "/api/v1/directives/nope/ack", "/api/v1/threads/nope/stop"];

describe(`hostile input (seed ${SEED}, ${ROUNDS} round(s))`, () => {
  it("malformed JSON and NDJSON", async () => {
    const r = rng(SEED + 1);
    const good = JSON.stringify(goodLine("/api/v1/events", "malformed", 1));
    const broken = () =>
      r.pick([
        () => good.slice(0, r.int(good.length)),
        () => good + "}".repeat(1 + r.int(3)),
        () => "{".repeat(1 + r.int(50)),
        () => "[".repeat(1 + r.int(50)) + "]",
        () => "\uFEFF",
        () => " \n\t\r\n ",
        () => `${good}\n${good.slice(1)}\n${good}`,
        () => Array.from({ length: 1 + r.int(20) }, () => (r.next() < 0.5 ? good : garbageString(r))).join("\n"),
        () => garbageString(r),
        () => String.fromCharCode(...Array.from({ length: 64 }, () => r.int(256))),
        () => "\u0000".repeat(100),
        () => '{"threadId": "t", "type": "progress", "at": 1e999}',
        () => '{"a":"\\ud800\\udc00\\uZZZZ"}',
      ])();
    const types = ["application/json", "application/x-ndjson", "text/plain", "application/jsonl; charset=latin1", "multipart/form-data; boundary=x", ""];
    const probes: Probe[] = Array.from({ length: 300 * ROUNDS }, () => ({ path: r.pick(POST_TARGETS), body: broken(), headers: { "content-type": r.pick(types) } }));
    await fire(probes);
    await keepsGoodLines("malformed", () => "not json at all");
  });

  it("wrong types and out-of-range values in every field", async () => {
    const r = rng(SEED + 2);
    const probes: Probe[] = [];
    for (let i = 0; i < 300 * ROUNDS; i++) {
      const path = r.pick(INGEST_PATHS);
      const lines = Array.from({ length: 1 + r.int(5) }, (_, n) => lineWith(path, r, `types-${r.int(20)}`, n, () => randomValue(r)));
      probes.push({ path: `${path}${r.next() < 0.2 ? `?threadId=${enc(garbageString(r))}` : ""}`, body: r.next() < 0.5 ? ndjson(lines) : JSON.stringify(lines) });
    }
    for (let i = 0; i < 50 * ROUNDS; i++) {
      probes.push({ path: "/api/v1/directives/nope/ack", body: JSON.stringify({ result: randomValue(r), detail: randomValue(r) }) });
      probes.push({ path: `/api/v1/threads/${segment(garbageString(r) || "x")}/stop`, body: JSON.stringify({ reason: randomValue(r) }) });
      probes.push({ path: "/api/v1/threads/nope/stop", body: JSON.stringify(randomValue(r)) });
    }
    await fire(probes);
    await keepsGoodLines("types", (path) => (path === "/api/v1/events" ? { threadId: 42, type: "progress" } : 42));
  });

  it("deep nesting", async () => {
    const r = rng(SEED + 3);
    const probes: Probe[] = [];
    for (let i = 0; i < 40 * ROUNDS; i++) {
      const path = r.pick(INGEST_PATHS);
      const depth = 1_000 + r.int(5_000);
      probes.push({ path, body: ndjson([lineWith(path, r, "deep", i, () => DEEP)], depth) });
      probes.push({ path, body: nestedJson(5_000) });
      probes.push({ path, body: "[".repeat(5_000) + "]".repeat(5_000) });
      probes.push({ path: r.pick(["/api/v1/directives/nope/ack", "/api/v1/threads/nope/stop"]), body: withDeep({ result: "acknowledged", detail: DEEP, reason: DEEP }, 5_000) });
    }
    await fire(probes);
    await keepsGoodLines("deep", (path) => ({ ...goodLine(path, "deep-x", 9), extra: DEEP }), 5_000);
  });

  it("multi-MB strings in messages, headers and ids", async () => {
    const r = rng(SEED + 4);
    // 1–2 MiB each, so that a line with several of them stays within the 10 MiB body limit.
    const huge = () => {
      const unit = r.pick(["x", "Try again in 1s ", "9", "Reconnecting... 1/5 "]);
      return unit.repeat(Math.ceil(((1 + r.int(2)) * 1024 * 1024) / unit.length));
    };
    const probes: Probe[] = [];
    for (let i = 0; i < 6 * ROUNDS; i++) {
      for (const path of INGEST_PATHS) probes.push({ path, body: ndjson([lineWith(path, r, `huge-${i}`, i, huge)]) });
      probes.push({
        path: "/api/v1/events",
        body: JSON.stringify({ threadId: `huge-h-${i}`, type: "retry", attempt: 1, error: { httpStatus: 429, message: huge(), retryAfter: huge(), headers: { [r.pick(["retry-after", "x-ratelimit-reset-requests", "anthropic-ratelimit-requests-reset"])]: huge() } } }),
      });
    }
    const answers = await fire(probes);
    expect(answers.filter((a) => a.status === 200).length, "multi-MB strings are cut, not refused wholesale").toBeGreaterThan(0);
    await keepsGoodLines("huge", (path) => ({ ...goodLine(path, "h".repeat(3 * 1024 * 1024), 9) }));
  });

  it("oversized bodies, declared and streamed without a length", async () => {
    const r = rng(SEED + 5);
    const failures: string[] = [];
    let refused = 0;
    let closed = 0;
    for (let i = 0; i < 3 * ROUNDS; i++) {
      // Every route that takes a body (one that refuses the request before reading it may close the connection at once).
      for (const path of POST_TARGETS.filter((target) => !target.endsWith("/bogus"))) {
        const limit = path.startsWith("/api/v1/ingest") || path === "/api/v1/events" ? MAX_INGEST_BODY_BYTES : MAX_COMMAND_BYTES;
        for (const declared of [true, false]) {
          const bytes = limit + 1 + r.int(declared ? 1024 : 1024 * 1024);
          const answer = await upload(path, bytes, declared).catch((error: Error) => error);
          // A server may also close the connection on a body it refuses (RFC 9110, 413); the
          // kernel then sometimes drops the answer already sent. Counted, never a failure.
          if (answer instanceof Error) {
            closed++;
            continue;
          }
          const failure = judge({ path, body: "" }, answer) ?? (answer.status !== 413 ? `${path}: ${answer.status} for ${bytes} bytes` : null);
          if (failure) failures.push(`${declared ? "declared" : "streamed"} ${failure}`);
          else refused++;
        }
      }
    }
    expect(failures.slice(0, 10), `seed ${SEED}`).toEqual([]);
    expect(refused, `${closed} connections closed without an answer`).toBeGreaterThan(closed);
    await healthy();
  });

  it("floods of tiny lines", async () => {
    const flood = "{}\n".repeat(Math.floor((9 * 1024 * 1024) / 3));
    const atCap = "{}\n".repeat(MAX_ITEMS);
    const probes: Probe[] = INGEST_PATHS.flatMap((path) => [
      { path, body: flood, headers: { "content-type": "application/x-ndjson" } },
      { path, body: atCap, headers: { "content-type": "application/x-ndjson" } },
      { path, body: `[${Array(MAX_ITEMS + 1).fill("{}").join(",")}]` },
    ]);
    const answers = await fire(probes);
    for (let i = 0; i < probes.length; i += 3) {
      expect(answers[i].status, probes[i].path).toBe(413);
      expect(answers[i].body.detail).toContain(String(MAX_ITEMS));
      // At the cap: answered, the echo of rejected lines capped, and 5,000 identical lines are at
      // most one event (codex-exec remembers this source's thread from earlier requests).
      expect(answers[i + 1].body.accepted ?? 0, probes[i].path).toBeLessThanOrEqual(1);
      if (answers[i + 1].body.rejected) expect(answers[i + 1].body.rejected.length).toBeLessThanOrEqual(100);
      expect(answers[i + 2].status).toBe(413);
    }
  });

  it("garbage query strings", async () => {
    const r = rng(SEED + 6);
    const NAMES = ["format", "range", "from", "to", "page", "pageSize", "status", "source", "kind", "q", "sort", "agent", "provider", "wait", "threadId", "filter", ""];
    const query = () =>
      Array.from({ length: 1 + r.int(6) }, () => {
        const value = garbageString(r);
        return `${enc(r.pick(NAMES))}=${r.next() < 0.8 ? enc(value) : value.replace(/[#\s]/g, "")}`;
      }).join("&");
    // The first `wait` is the one read: garbage, but never a real long-poll (up to 30 s), which is a valid request.
    const wait = () => {
      const value = garbageString(r);
      return Number(value) > 0 && Number(value) <= 30 ? "0" : enc(value);
    };
    const probes: Probe[] = [];
    for (let i = 0; i < 300 * ROUNDS; i++) {
      const path = r.pick(GET_PATHS);
      probes.push({ path: `${path}?${path === "/api/v1/directives" ? `wait=${wait()}&` : ""}${query()}` });
    }
    for (let i = 0; i < 20 * ROUNDS; i++) probes.push({ path: `/api/v1/stream?${query()}`, headOnly: true });
    for (let i = 0; i < 40 * ROUNDS; i++) {
      const path = r.pick(INGEST_PATHS);
      probes.push({ path: `${path}?${query()}`, body: ndjson([goodLine(path, `q-${i}`, i)]) });
    }
    await fire(probes);
  });

  it("paths that are not valid UTF-8 after percent-decoding", async () => {
    const r = rng(SEED + 8);
    // Escapes of bytes no UTF-8 text has here: stray continuation bytes, lone lead bytes, surrogates, overlongs.
    const bad = () => r.pick(["%FF", "%fe", "%80", "%C0", "%C3", "%ED%A0%80", "%E2%82", "%F0%9F%98", "%C0%AF", "a%FFb"]);
    const templates: Array<[Probe["method"], (segment: string) => string]> = [
      ["GET", (x) => `/api/v1/threads/${x}`],
      ["GET", (x) => `/api/v1/threads/${x}/export`],
      ["POST", (x) => `/api/v1/threads/${x}/stop`],
      ["GET", (x) => `/api/v1/exports/${x}`],
      ["POST", (x) => `/api/v1/ingest/${x}`],
      ["POST", (x) => `/api/v1/directives/${x}/ack`],
      ["GET", (x) => `/api/v1/threads/by-key/${x}`],
      ["GET", (x) => `/api/v1/threads/by-key/1/events/${x}/raw`],
      ["GET", (x) => `/threads/${x}`],
      ["GET", (x) => `/${x}`],
    ];
    const probes: Probe[] = [];
    for (let i = 0; i < 20 * ROUNDS; i++) {
      const [method, path] = r.pick(templates);
      probes.push({ method, path: path(bad()), body: method === "POST" ? "{}" : undefined });
    }
    const answers = await fire(probes);
    answers.forEach((answer, i) => {
      expect(answer.status, `${probes[i].method} ${probes[i].path}`).toBe(400);
      expect((answer.body as { detail: string }).detail).toContain("not valid UTF-8");
    });
  });

  it("wrong and oversized credentials", async () => {
    const r = rng(SEED + 7);
    const latin1 = (n: number) => Array.from({ length: n }, () => String.fromCharCode(33 + r.int(94))).join("");
    const probes: Probe[] = [];
    for (let i = 0; i < 100 * ROUNDS; i++) {
      const header = r.pick([
        () => `Bearer ${latin1(1 + r.int(64))}`,
        () => `Bearer ${latin1(8 * 1024)}`,
        () => `Bearer ${latin1(64 * 1024)}`,
        () => "Bearer",
        () => "",
        () => `Basic ${latin1(20)}`,
        () => `bearer  ${server.token}x`,
        () => `Bearer ${server.token} ${server.token}`,
      ])();
      const path = r.pick([...POST_TARGETS, "/api/v1/directives"]);
      probes.push({ path, token: null, headers: { authorization: header }, body: path === "/api/v1/directives" ? undefined : ndjson([goodLine("/api/v1/events", "creds", i)]) });
    }
    const answers = await fire(probes);
    answers.forEach((answer, i) => {
      if (probes[i].path.startsWith("/api/v1/ingest/") || probes[i].path === "/api/v1/events" || probes[i].path === "/api/v1/directives") {
        expect([401, 404, 431], `${probes[i].path}: ${probes[i].headers?.authorization?.slice(0, 40)}`).toContain(answer.status);
      }
    });
  });

  // Revoked credentials mid-stream: seeded keys, streams and revocation order, with ingestion
  // publishing meanwhile. A revoked key's streams end at once with `end` (credentials), it is
  // refused after (401 problem+json), and the streams of keys not yet revoked go on.
  it("revoked credentials mid-stream", async () => {
    const r = rng(SEED + 11);
    for (let round = 0; round < ROUNDS; round++) {
      const keys = Array.from({ length: 2 + r.int(3) }, (_, i) => newApiKey(`fuzz-stream-${round}-${i}`, r.pick(["viewer", "operator", "admin"] as const), null));
      for (const { row } of keys) await server.addApiKey(row);
      // At most 4 keys × 3 streams: within the per-client cap of live streams.
      const streams = await Promise.all(
        keys.flatMap(({ key }, k) => Array.from({ length: 1 + r.int(3) }, () => openFuzzStream(key).then((stream) => ({ k, ...stream })))),
      );
      const order = keys.map((_, k) => k).sort(() => r.next() - 0.5);
      for (const [n, k] of order.entries()) {
        // Publications in flight while the key is revoked.
        const ingest = Array.from({ length: r.int(3) }, (_, i) =>
          server.fetch("/api/v1/events", { method: "POST", headers: { authorization: `Bearer ${server.token}` }, body: ndjson([goodLine("/api/v1/events", `revoked-${round}-${n}-${i}`, i)]) }).then((answer) => answer.arrayBuffer()),
        );
        const { result } = await callAction(server.url, builtAction("lib/actions/revoke-api-key.ts#revokeApiKey"), { form: { keyId: keys[k].row.id } }, { authorization: `Bearer ${server.apiKey}` });
        expect(result).toMatchObject({ ok: true });
        await Promise.all(ingest);
        for (const stream of streams.filter((s) => s.k === k)) expect(await stream.ended).toBe(`event: end\ndata: ${JSON.stringify({ reason: "credentials" })}`);
        const again = await fetch(`${server.url}/api/v1/stream`, { headers: { authorization: `Bearer ${keys[k].key}` } });
        expect(again.status).toBe(401);
        expect(again.headers.get("content-type")).toMatch(/application\/problem\+json/);
        await again.arrayBuffer();
        // Every stream of a key not revoked yet is still open: it hears of the next batch.
        const open = streams.filter((s) => order.indexOf(s.k) > n);
        const heard = open.map((stream) => stream.heardMore());
        if (open.length) {
          const sent = await server.fetch("/api/v1/events", {
            method: "POST",
            headers: { authorization: `Bearer ${server.token}` },
            body: ndjson([goodLine("/api/v1/events", `revoked-heard-${round}-${n}`, 0)]),
          });
          expect(sent.status).toBe(200);
          await Promise.all(heard);
        }
      }
    }
    await healthy();
  });

  // Compression bombs: every format, every ingest endpoint. The OTLP endpoints take gzip and
  // measure what it inflates to before decoding it (413 naming the bound); the others take no
  // content encoding at all (415), so a bomb there is never inflated.
  it("compression bombs for every format", async () => {
    const gz = (text: string | Uint8Array) => new Uint8Array(gzipSync(text));
    const nested = (depth: number) => `{"resourceLogs":${"[".repeat(depth)}${"]".repeat(depth)}}`;
    const pairs = (bytes: number, a: number, b: number) => Buffer.from(new Uint8Array(bytes).map((_, i) => (i % 2 === 0 ? a : b)));
    const native = [
      gz("{}\n".repeat(3_000_000)),
      gz(`[${Array(2_000_000).fill("{}").join(",")}]`),
      gz(nestedJson(4_000_000)),
      gz(Buffer.alloc(MAX_INGEST_BODY_BYTES * 2)),
    ];
    const probes: Probe[] = [];
    for (const path of INGEST_PATHS) for (const body of native) probes.push({ path, body, headers: { "content-encoding": "gzip", "content-type": "application/x-ndjson" } });
    /** A length-delimited protobuf field. */
    const field = (number: number, body: Uint8Array) => {
      const length: number[] = [];
      for (let n = body.length; ; n = Math.floor(n / 128)) {
        length.push(n < 128 ? n : (n & 0x7f) | 0x80);
        if (n < 128) break;
      }
      return Buffer.concat([Buffer.from([(number << 3) | 2, ...length]), body]);
    };
    // One record (a metric's metadata for metrics) of 1.2 million empty attributes.
    const attributes = { "/v1/logs": 0x32, "/v1/traces": 0x4a, "/v1/metrics": 0x62 } as const;
    for (const path of ["/v1/logs", "/v1/traces", "/v1/metrics"] as const) {
      const otlp: [string, Uint8Array][] = [
        ["application/x-protobuf", gz(pairs(10_000_000, 0x0a, 0x00))], // empty resource entries
        ["application/x-protobuf", gz(field(1, field(2, field(2, pairs(2_400_000, attributes[path], 0x00)))))],
        ["application/json", gz(`{"resourceLogs":[${"{},".repeat(3_000_000)}{}]}`)],
        ["application/json", gz(nested(4_000_000))],
        ["application/x-protobuf", gz(Buffer.alloc(MAX_INGEST_BODY_BYTES + 1))],
      ];
      for (const [type, body] of otlp) probes.push({ path, body, headers: { "content-encoding": "gzip", "content-type": type } });
    }
    for (const probe of probes) expect((probe.body as Uint8Array).length, probe.path).toBeLessThan(50_000);
    const answers = await fire(probes);
    answers.forEach((answer, i) => {
      const what = `${probes[i].path} ${probes[i].headers!["content-type"]} #${i}`;
      expect(answer.status, `${what}: ${JSON.stringify(answer.body).slice(0, 300)}`).toBe(probes[i].path.startsWith("/v1/") ? 413 : 415);
    });
  });

  // Last: after every class above. The slowest health answer is reported, not asserted — a
  // busy machine makes it slow without anything being wrong (`npm run soak -- --load` shows it).
  it("leaves the server answering /api/health throughout, and its heap after collection back where it started", async () => {
    const heap = await heapAfterCollection();
    const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
    process.stdout.write(`[fuzz] /api/health asked ${health.asked} times, slowest ${health.slowestMs.toFixed(0)} ms; heap after collection ${mb(baselineHeap)} MB before, ${mb(heap)} MB after\n`);
    expect(health.failed, "every /api/health answer during the fuzz").toEqual([]);
    expect(health.asked).toBeGreaterThan(0);
    expect(heap - baselineHeap, `heap grew from ${mb(baselineHeap)} MB to ${mb(heap)} MB`).toBeLessThan(HEAP_SLACK_BYTES);
  });
});

/**
 * Control characters in redirect targets: where sign-in sends someone afterwards (`next`), through
 * the sign-in page (which sends a signed-in caller on at once, and hands `next` to its form
 * otherwise) and the sign-in action. Whatever the target holds (tabs, newlines and other control
 * characters, raw or percent-encoded, backslashes, encoded slashes, dot segments, schemes), the
 * answer is below 500 and every place it sends the browser is on this server's origin, as a
 * browser reads it (the URL parser drops tabs and newlines and reads `\` as `/`) and once more
 * percent-decoded.
 */
describe(`control characters in redirect targets (seed ${SEED}, ${ROUNDS} round(s))`, () => {
  const PERSON = { email: "redirects@fuzz.test", password: "redirects-fuzz-password" };
  const KNOWN = [
    "/%09/evil.example", "/%0a/evil.example", "/%0D%0A/evil.example", "/%00/evil.example", "/%7F/evil.example",
    "/\t/evil.example", "/\n/evil.example", "/\r\n/evil.example", "\t//evil.example", "/\\evil.example", "/\\/evil.example",
    "/%5Cevil.example", "/%5c%5cevil.example", "//evil.example", "///evil.example", "https://evil.example", "https:evil.example",
    "/%2F%2Fevil.example", "/%2fevil.example", "/%252F%252Fevil.example", "/%2509/evil.example", "/..//evil.example",
    "/.//evil.example", "/%2e%2e//evil.example", "/a/../..//evil.example", "javascript:alert(1)", "/@evil.example",
    `/${"%09".repeat(700)}/evil.example`,
  ];
  const PIECES = ["\t", "\n", "\r", "\u0000", "\u001f", "\u007f", "%09", "%0a", "%0D", "%00", "%1f", "%7F", "\\", "%5c", "%5C", "/", "//", "%2f", "%2F", "%252F", "%2509", ".", "..", "%2e%2e", "@", ":", "https:", "?", "#", " ", "evil.example"];
  const ORIGIN = () => new URL(server.url).origin;

  /** Every place `location` sends a browser stays on this server: as the URL parser reads it, and percent-decoded once more. */
  function offOrigin(location: string | null): string | null {
    if (location === null) return null;
    const forms = [location];
    try {
      forms.push(decodeURIComponent(location));
    } catch {
      // not decodable: the browser reads it as it is
    }
    for (const form of forms) {
      let origin: string;
      try {
        origin = new URL(form, server.url).origin;
      } catch {
        return `${JSON.stringify(location)} is not a URL`;
      }
      if (origin !== ORIGIN()) return `${JSON.stringify(location)} leads to ${origin}`;
    }
    return null;
  }

  function targets(r: Rng): string[] {
    const made = [...KNOWN];
    for (let i = 0; i < 60 * ROUNDS; i++) {
      let target = r.next() < 0.9 ? "/" : "";
      for (let n = 1 + r.int(5); n > 0; n--) target += r.pick(PIECES);
      made.push(target.includes("evil.example") ? target : `${target}evil.example`);
    }
    return made;
  }

  const decodeHtml = (text: string) => text.replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

  it("the sign-in page: sends a signed-in caller only to this server, and gives its form only a path here", async () => {
    const failures: string[] = [];
    for (const target of targets(rng(SEED + 42))) {
      const url = `${server.url}/sign-in?next=${encodeURIComponent(target)}`;
      const signedIn = await fetch(url, { redirect: "manual", headers: { authorization: `Bearer ${server.apiKey}` } });
      await signedIn.arrayBuffer();
      if (signedIn.status >= 500) failures.push(`${JSON.stringify(target)}: signed in, ${signedIn.status}`);
      const wrong = offOrigin(signedIn.headers.get("location"));
      if (wrong) failures.push(`${JSON.stringify(target)}: signed in, ${wrong}`);

      const signedOut = await fetch(url, { redirect: "manual" });
      const html = await signedOut.text();
      if (signedOut.status !== 200) failures.push(`${JSON.stringify(target)}: signed out, ${signedOut.status}`);
      for (const match of html.matchAll(/name="next" value="([^"]*)"/g)) {
        const next = decodeHtml(match[1]);
        const bad = !next.startsWith("/") || next.startsWith("//") ? `${JSON.stringify(next)} is not a path` : offOrigin(next);
        if (bad) failures.push(`${JSON.stringify(target)}: the form's next ${bad}`);
      }
    }
    expect(failures.slice(0, 10), `seed ${SEED}: ${failures.length} bad answers`).toEqual([]);
    await healthy();
  });

  it("the sign-in action: sends the person it signed in only to this server", async () => {
    // Not spawnSync: idle pooled connections the server closes meanwhile must be seen closed.
    await promisify(execFile)("npm", ["run", "--silent", "users", "--", "create", "--email", PERSON.email, "--role", "viewer", "--password", PERSON.password], {
      cwd: path.resolve(import.meta.dirname, "../.."),
      env: { ...process.env, DATABASE_URL: server.databaseUrl, HOST: "127.0.0.1", PORT: new URL(server.url).port },
    });
    const signIn = builtAction("lib/actions/sign-in.ts#signIn");
    const failures: string[] = [];
    // Fewer than the page gets: each one is a real sign-in (a password hashed).
    const all = targets(rng(SEED + 43));
    for (const target of [...KNOWN, ...all.slice(KNOWN.length, KNOWN.length + 12 * ROUNDS)]) {
      const { response, body, result } = await callAction(server.url, signIn, { form: { ...PERSON, next: target } });
      if (response.status >= 500) failures.push(`${JSON.stringify(target)}: ${response.status}`);
      // A fetch action names its redirect in x-action-redirect (`<url>;<push|replace>`).
      const redirect = response.headers.get("x-action-redirect")?.replace(/;(push|replace)$/, "") ?? null;
      // Signed in and sent on, or refused saying why (a NUL is refused in any action's input).
      if (redirect === null && response.headers.get("location") === null && !(result?.ok === false && result.error)) {
        failures.push(`${JSON.stringify(target)}: neither sent on nor refused (${response.status} ${body.slice(0, 200)})`);
      }
      for (const location of [redirect, response.headers.get("location")]) {
        const wrong = offOrigin(location);
        if (wrong) failures.push(`${JSON.stringify(target)}: ${wrong}`);
      }
    }
    expect(failures.slice(0, 10), `seed ${SEED}: ${failures.length} bad answers`).toEqual([]);
    await healthy();
  });
});
