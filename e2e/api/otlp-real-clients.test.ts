/**
 * The REAL Claude Code and Codex CLIs (dev dependencies) reporting to the built app with their
 * own OpenTelemetry exporters, no relay around them: each runs once against the mock provider,
 * which fails its first calls with 429s (or all of them: Claude gives up; or with 503s: a
 * `codex exec` dies mid-storm without flushing), and the thread the radar shows has the right
 * outcome and counts every call its export showed.
 * Both flush their exports when they exit, so the threads are complete soon after. And Claude
 * run by the relay while its exporter reports to another source: one thread on the board.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BY_OPENTELEMETRY } from "@/lib/threads/control";
import type { ThreadDetail } from "@/lib/wire/types";
import { overloaded503, rateLimited, startMockProvider, type MockProvider } from "../support/mock-provider";
import { PATIENCE_MS } from "../support/patience";
import { claudeEnv, codexEnv, removeTempDirs, ROOT, startRelay, waitFor, withTimeout } from "../support/relay-helpers";
import { summary, threadDetail } from "../support/relay-radar";
import { get, startServer, type RunningServer } from "../support/server";

let server: RunningServer;
let mock: MockProvider;

beforeAll(async () => {
  [server, mock] = await Promise.all([startServer(), startMockProvider()]);
});
afterAll(async () => {
  await Promise.all([server?.stop(), mock?.close()]);
  removeTempDirs();
});

/** Runs a CLI of node_modules/.bin to its end; its stdout names the thread. */
async function run(bin: string, args: string[], env: Record<string, string>, cwd: string) {
  const child = spawn(path.join(ROOT, "node_modules", ".bin", bin), args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  try {
    const code = await withTimeout(exited, PATIENCE_MS, `${bin} run`);
    return { code, stdout, stderr };
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}

/** Claude Code's OpenTelemetry settings (logs, and the beta's traces) pointed at the radar. */
const claudeOtel = (token: string): Record<string, string> => ({
  CLAUDE_CODE_ENABLE_TELEMETRY: "1",
  OTEL_LOGS_EXPORTER: "otlp",
  OTEL_METRICS_EXPORTER: "otlp",
  OTEL_TRACES_EXPORTER: "otlp",
  CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: "1",
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  OTEL_EXPORTER_OTLP_ENDPOINT: server.url,
  OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer ${token}`,
  OTEL_LOGS_EXPORT_INTERVAL: "1000",
  OTEL_TRACES_EXPORT_INTERVAL: "1000",
});

/** Waits until the radar shows the thread in `status`. */
/** A Codex home whose config exports every signal to the radar as OTLP JSON, with `token`. */
function codexOtel(token: string) {
  const codex = codexEnv(mock);
  const endpoint = (signal: string) => `{ otlp-http = { endpoint = "${server.url}/v1/${signal}", protocol = "json", headers = { "Authorization" = "Bearer ${token}" } } }`;
  fs.appendFileSync(
    path.join(codex.home, "config.toml"),
    ["[otel]", `exporter = ${endpoint("logs")}`, `trace_exporter = ${endpoint("traces")}`, `metrics_exporter = ${endpoint("metrics")}`, ""].join("\n"),
  );
  return codex;
}

const settled = (id: string, ...statuses: string[]) =>
  waitFor(async () => {
    const view = (await threadDetail(server, id)) as ThreadDetail | null;
    return view && statuses.includes(view.thread.status) ? view : null;
  }, PATIENCE_MS, async () => summary(await threadDetail(server, id)));

describe("real CLIs exporting OpenTelemetry straight to the radar", () => {
  it("Claude Code: two 429s, then the answer: completed, its retries from the attempt events", async () => {
    mock.enqueue("anthropic", rateLimited(1), rateLimited(1));
    // A source of its own: no relay ever polled for it, so nothing can control its threads.
    const otel = await server.addSource("claude-otel-only");
    const claude = claudeEnv(mock);
    const env = { ...claude.env, ...claudeOtel(otel.token) };
    const result = await run("claude", ["-p", "--output-format", "stream-json", "--verbose", "say hi"], env, claude.cwd);
    expect(result.code, result.stderr).toBe(0);
    const session = /"session_id":"([^"]+)"/.exec(result.stdout)?.[1];
    expect(session, result.stdout).toBeTruthy();
    const view = await settled(session!, "completed");
    expect(view.thread).toMatchObject({ agent: "claude-code", provider: "anthropic" });
    expect(view.thread.control.why).toBe(BY_OPENTELEMETRY);
    expect(view.episodes.at(-1)?.attempts.length).toBe(2);
    expect(view.events.every((e) => e.format === "otlp")).toBe(true);
  });

  it("Claude Code through the relay and its OpenTelemetry to another source: one thread, the relay's, its retries once", async () => {
    mock.enqueue("anthropic", rateLimited(1), rateLimited(1));
    const otel = await server.addSource("claude-otel");
    const claude = claudeEnv(mock);
    const relay = startRelay(["claude", "--server", server.url, "--token", server.token, "--", "say hi"], { env: { ...claude.env, ...claudeOtel(otel.token) }, cwd: claude.cwd });
    try {
      const exit = await withTimeout(relay.exited, PATIENCE_MS, "relay claude");
      expect(exit.code, relay.stderr()).toBe(0);
    } finally {
      if (relay.child.exitCode === null) relay.kill("SIGKILL");
    }
    const session = /"session_id":"([^"]+)"/.exec(relay.stdout())?.[1];
    expect(session, relay.stdout()).toBeTruthy();
    // The exporter flushes when Claude exits: wait for the other path to be joined.
    const view = await waitFor(async () => {
      const v = (await threadDetail(server, session!)) as ThreadDetail | null;
      return v?.thread.status === "completed" && v.thread.alsoReportedBy.length === 1 ? v : null;
    }, PATIENCE_MS, async () => summary(await threadDetail(server, session!)));
    expect(view.thread.alsoReportedBy[0].sourceId).toBe(otel.id);
    expect(view.thread.control.interrupt).toBe(true);
    expect(view.episodes.flatMap((e) => e.attempts)).toHaveLength(2);
    // Its page (the detail as served) merges the OpenTelemetry events into the relay's timeline.
    const page = (await get(server, `/api/v1/threads/${session}`)).body as ThreadDetail;
    expect(new Set(page.events.map((e) => e.format))).toEqual(new Set(["claude", "otlp"]));
    const board = await get(server, `/api/v1/threads?q=${session}`);
    expect(board.body.threads.map((t: { sourceId: string }) => t.sourceId)).toEqual([view.thread.sourceId]);
  });

  it("codex exec: two 429s, then the answer: completed after two rate-limit retries", async () => {
    mock.enqueue("openai", rateLimited(1), rateLimited(1));
    const otel = await server.addSource("codex-otel-only");
    const codex = codexOtel(otel.token);
    const result = await run("codex", ["exec", "--json", "--skip-git-repo-check", "say hi"], codex.env, codex.cwd);
    expect(result.code, result.stderr).toBe(0);
    const thread = /"thread_id":"([^"]+)"/.exec(result.stdout)?.[1];
    expect(thread, result.stdout).toBeTruthy();
    // codex exec exports its last batch (the turn's completion) while it exits, with a short
    // timeout of its own: on a busy machine that batch can be lost, and the thread honestly ends
    // where the data does — recovered, its retry having worked.
    const view = await settled(thread!, "completed", "recovered");
    expect(view.thread).toMatchObject({ agent: "codex-exec" });
    expect(view.thread.control.why).toBe(BY_OPENTELEMETRY);
    const episode = view.episodes.at(-1);
    expect(episode).toMatchObject({ kind: "rate_limit" });
    expect(episode?.attempts.length).toBe(2);
  });

  it("Claude Code giving up on 429s (CLAUDE_CODE_MAX_RETRIES=4): failed after 5 attempts, with its own retry time", async () => {
    mock.enqueue("anthropic", ...Array.from({ length: 5 }, () => rateLimited(1)));
    const otel = await server.addSource("claude-otel-give-up");
    const claude = claudeEnv(mock);
    const env = { ...claude.env, ...claudeOtel(otel.token), CLAUDE_CODE_MAX_RETRIES: "4" };
    const result = await run("claude", ["-p", "--output-format", "stream-json", "--verbose", "say hi"], env, claude.cwd);
    expect(result.code, result.stderr).toBe(1);
    const session = /"session_id":"([^"]+)"/.exec(result.stdout)?.[1];
    expect(session, result.stdout).toBeTruthy();
    const view = await waitFor(async () => {
      const v = (await threadDetail(server, session!)) as ThreadDetail | null;
      return v?.thread.status === "failed" && v.episodes.at(-1)?.reportedRetryMs != null ? v : null;
    }, PATIENCE_MS, async () => summary(await threadDetail(server, session!)));
    const episode = view.episodes.at(-1)!;
    expect(episode).toMatchObject({ kind: "rate_limit", outcome: "failed", attemptsMade: 5 });
    expect(episode.reportedRetryMs).toBeGreaterThan(3_000);
  });

  it("codex exec dying in a 503 storm before its last export: a capacity episode counting every call it logged", async () => {
    // Codex makes five calls on 503s, then fails the turn and exits 1 without flushing.
    mock.enqueue("openai", ...Array.from({ length: 5 }, () => overloaded503()));
    const otel = await server.addSource("codex-otel-storm");
    const codex = codexOtel(otel.token);
    const result = await run("codex", ["exec", "--json", "--skip-git-repo-check", "say hi"], codex.env, codex.cwd);
    expect(result.code, result.stdout).toBe(1);
    const thread = /"thread_id":"([^"]+)"/.exec(result.stdout)?.[1];
    expect(thread, result.stdout).toBeTruthy();
    // What arrived is what Codex flushed before it died: at least the batch with two calls.
    const view = await waitFor(async () => {
      const v = (await threadDetail(server, thread!)) as ThreadDetail | null;
      return v && v.episodes.length === 1 ? v : null;
    }, PATIENCE_MS, async () => summary(await threadDetail(server, thread!)));
    const calls = view.events.filter((e) => e.type === "attempt").length;
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(calls).toBeLessThan(5);
    expect(view.thread.status).toBe("retrying");
    expect(view.episodes[0]).toMatchObject({ kind: "capacity", outcome: null, attemptsMade: calls });
  });
});
