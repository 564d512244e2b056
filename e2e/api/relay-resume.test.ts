/**
 * Resume at reset with the REAL Codex CLI (`codex app-server`) through the relay, against the
 * built app and the mock model provider: the first model call is refused with the usage-limit
 * error Codex knows, its window resetting a few seconds ahead; Codex fails the turn without
 * retrying; the source has resume at reset on, so the radar schedules a `continue` at the reset;
 * the relay (kept running with --stay, since a continuation can only reach a live app-server)
 * starts the continuation turn, the next model call succeeds and the thread completes.
 * Every wait is on what the API shows; PATIENCE_MS only bounds a hang.
 */
import { describe, expect, it } from "vitest";
import { builtAction, callAction } from "../support/actions";
import { usageLimited } from "../support/mock-provider";
import { PATIENCE_MS, TEST_TIMEOUT_MS } from "../support/patience";
import { codexEnv, startRelay, waitFor, withTimeout } from "../support/relay-helpers";
import { summary, threadDetail } from "../support/relay-radar";
import { relaySuite } from "../support/relay-suite";
import { get, queryDatabase, type RunningServer } from "../support/server";

/** The source whose ingest token the relay carries (the server's first). */
async function sourceOf(server: RunningServer): Promise<string> {
  return (await queryDatabase<{ id: string }>(server, `SELECT id FROM "Source" LIMIT 1`))[0].id;
}

async function setResumeAtReset(server: RunningServer, on: boolean) {
  const form: Record<string, string> = { sourceId: await sourceOf(server), policy: "" };
  if (on) form.resumeAtReset = "on";
  const { result } = await callAction(server.url, builtAction("lib/actions/update-source.ts#updateSource"), { form }, { authorization: `Bearer ${server.apiKey}` });
  expect(result).toMatchObject({ ok: true });
}

const RESET_IN_SECONDS = 5;

describe("relay codex-app-server with the real Codex CLI: resume at reset", () => {
  const suite = relaySuite();

  it(
    "a turn stopped by a usage limit is continued by the radar at the window's reset, through the relay, and completes",
    async () => {
      await setResumeAtReset(suite.server, true);
      try {
        suite.mock.enqueue("openai", usageLimited(RESET_IN_SECONDS));
        const before = suite.mock.calls("openai").length;
        const codex = codexEnv(suite.mock);
        suite.relay = startRelay(
          ["codex-app-server", "--server", suite.server.url, "--token", suite.server.token, "--prompt", "say hi", "--cwd", codex.cwd, "--poll-wait", "5s", "--stay"],
          // Codex prints the reset as a wall-clock time in its own zone; the radar reads such texts as UTC.
          { env: { ...codex.env, TZ: "UTC" } },
        );
        const r = suite.relay;
        const threadId = await waitFor(() => /supervising Codex thread (\S+),/.exec(r.stderr())?.[1], PATIENCE_MS, () => r.stderr());
        // The window resets a few seconds after the refused call arrived (epoch seconds, as the provider says it).
        const [refused] = await suite.mock.waitForCalls("openai", before + 1).then((calls) => calls.slice(before));
        const resetAt = (Math.floor(refused.at / 1000) + RESET_IN_SECONDS) * 1000;
        const explain = async () => `${summary(await threadDetail(suite.server, threadId))}\n${r.stderr()}`;

        // The refusal ends the turn; the radar schedules the continuation at the window's reset.
        const scheduled = await waitFor(
          async () => {
            const v = await get(suite.server, `/api/v1/threads/${threadId}`);
            return v.status === 200 && v.body.state?.recovery?.policy === "resume-at-reset" ? v.body : null;
          },
          PATIENCE_MS,
          explain,
        );
        expect(scheduled.thread.lastError).toMatchObject({ kind: "usage_limit", code: "usageLimitExceeded" });
        // Scheduled (or, on a machine slow enough to see it only after the reset, fired already).
        expect(["scheduled", "fired"]).toContain(scheduled.state.recovery.state);
        const resumeAt: number = scheduled.state.recovery.dueAt;
        if (scheduled.state.recovery.state === "scheduled") expect(Date.parse(scheduled.thread.resumeAt)).toBe(resumeAt);
        // At the reset (to the second the provider gave), plus a small jitter: not a minute later.
        expect(resumeAt).toBeGreaterThanOrEqual(resetAt);
        expect(resumeAt).toBeLessThan(resetAt + 1_000);

        // The relay carries the continue out (turn/start), Codex calls the model again and the turn completes.
        const done = await waitFor(
          async () => {
            const v = await threadDetail(suite.server, threadId);
            return v?.thread.status === "completed" ? v : null;
          },
          Math.max(0, resumeAt - Date.now()) + PATIENCE_MS,
          explain,
        );
        const calls = suite.mock.calls("openai");
        expect(calls).toHaveLength(before + 2);
        expect(calls.at(-1)!.at).toBeGreaterThanOrEqual(resumeAt);
        const resume = done.directives.find((d) => d.kind === "continue")!;
        expect(resume).toMatchObject({ origin: "recovery", state: "acknowledged", result: "acknowledged" });
        expect(resume.detail).toMatch(/Codex started continuation turn/);
        expect(Date.parse(resume.createdAt)).toBeGreaterThanOrEqual(resumeAt);
        expect(done.events.filter((e) => e.type === "turn.completed")).toHaveLength(1);
        expect(done.events.some((e) => e.type === "turn.failed")).toBe(true);
        const after = (await get(suite.server, `/api/v1/threads/${threadId}`)).body;
        expect(after.state.recovery).toMatchObject({ policy: "resume-at-reset", state: "fired" });

        // --stay keeps the relay for further continuations; Ctrl-C ends it after a flush.
        r.kill("SIGINT");
        const exit = await withTimeout(r.exited, PATIENCE_MS, "relay exit");
        expect(exit.code, r.stderr()).toBe(130);
      } finally {
        await setResumeAtReset(suite.server, false);
      }
    },
    TEST_TIMEOUT_MS,
  );
});
