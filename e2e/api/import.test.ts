import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { get, startServer, type RunningServer } from "../support/server";
import { fixturesDir } from "@/lib/ingest/test-fixtures";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
const fixtures = fixturesDir();
let server: RunningServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

it("npm run import replays a capture with its original timing, and a second import changes nothing", async () => {
  const file = path.join(fixtures, "codex-exec-429-always.jsonl");
  const args = [path.join(root, "scripts/import.ts"), file, "--server", server.url, "--token", server.token];
  const tsx = path.join(root, "node_modules/.bin/tsx");
  const first = await run(tsx, args, { cwd: root });
  expect(first.stdout).toMatch(/codex-exec capture, 9 lines sent \(4 bookkeeping lines skipped\): 9 accepted, 0 duplicates, 0 rejected/);
  const second = await run(tsx, args, { cwd: root });
  expect(second.stdout).toMatch(/0 accepted, 9 duplicates/);
  const thread = await get(server, "/api/v1/threads/01a2283f-8f1a-7350-b1d4-8b166293fd6a");
  expect(thread.body.thread.status).toBe("failed");
  // Original timing: the first retry notice keeps the capture's time, not the import's.
  expect(thread.body.episodes[0].startedAt).toBe("2026-11-29T16:59:43.959Z");
});

it("a wrong token or an unreachable server is one clear line, not a stack trace", async () => {
  const tsx = path.join(root, "node_modules/.bin/tsx");
  const file = path.join(fixtures, "codex-exec-429-always.jsonl");
  await expect(run(tsx, [path.join(root, "scripts/import.ts"), file, "--server", server.url, "--token", "rr_nope"], { cwd: root })).rejects.toMatchObject({
    stderr: expect.stringMatching(/^import: 401: The ingest token is unknown or has been revoked\.\n$/),
  });
});
