import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtAction, callAction } from "../support/actions";
import { PATIENCE_MS, TEST_TIMEOUT_MS } from "../support/patience";
import { get, post, queryDatabase, startServer, threadDetail, type RunningServer } from "../support/server";

/**
 * Operator controls on ended threads and resume at reset, against the built app: Resume now and
 * Retry now deliver the right directives and audit rows, archive hides a thread and cancels its
 * pending resume, a resume at reset is delivered at the reset (a reset a few seconds ahead, the
 * watchdog's own clock) and Cancel calls it off. The source is a relay that announced it can
 * interrupt and continue.
 */
let server: RunningServer;
let sourceId: string;
let run = 0;
const uid = (name: string) => `${name}-${Date.now().toString(36)}-${run++}`;


const audit = (target: string) => queryDatabase<{ action: string; result: string }>(server, `SELECT action, result FROM "AuditEntry" WHERE target = ? ORDER BY id`, [target]);

/** The relay's poll: announces what it can carry out and takes what is pending. */
const poll = (wait = 0, can = "interrupt,continue") => get(server, `/api/v1/directives?wait=${wait}&can=${can}`);

async function setResumeAtReset(on: boolean) {
  const form: Record<string, string> = { sourceId, policy: "" };
  if (on) form.resumeAtReset = "on";
  const { result } = await callAction(server.url, builtAction("lib/actions/update-source.ts#updateSource"), { form }, { authorization: `Bearer ${server.apiKey}` });
  expect(result).toMatchObject({ ok: true });
}

async function send(events: object[]) {
  const answer = await post(server, "/api/v1/events", events);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body.rejected).toEqual([]);
}

/** A turn that failed on a usage limit whose window resets `inMs` from now. */
async function usageLimited(threadId: string, inMs: number) {
  const now = Date.now();
  await send([
    { threadId, type: "turn.started", turnId: "u1", at: new Date(now).toISOString() },
    {
      threadId,
      type: "turn.failed",
      turnId: "u1",
      at: new Date(now).toISOString(),
      error: { httpStatus: 429, message: "You've hit your usage limit.", details: { resetsAt: (now + inMs) / 1000 } },
    },
  ]);
}

beforeAll(async () => {
  server = await startServer();
  [{ id: sourceId }] = await queryDatabase<{ id: string }>(server, `SELECT id FROM "Source" LIMIT 1`);
  expect((await poll()).status).toBe(200);
}, TEST_TIMEOUT_MS);
afterAll(async () => {
  await server?.stop();
});

describe("Resume now and Retry now", () => {
  it("Resume now on a failed thread sends one continue from the operator, audited", async () => {
    const id = uid("resume");
    await send([
      { threadId: id, type: "turn.started", turnId: "u1" },
      { threadId: id, type: "turn.failed", turnId: "u1", error: { httpStatus: 500, message: "upstream error" } },
    ]);
    const answer = await post(server, `/api/v1/threads/${id}/resume`, { reason: "try again" });
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    expect(answer.body).toMatchObject({ result: "sent", status: "recovery_scheduled" });
    const detail = await threadDetail(server, id);
    expect(detail.directives).toEqual([expect.objectContaining({ kind: "continue", origin: "operator", turnId: "u1", reason: "try again" })]);
    expect((await poll()).body.directives).toEqual(expect.arrayContaining([expect.objectContaining({ threadId: id, kind: "continue" })]));
    expect(await audit(id)).toEqual([{ action: "resume", result: "sent" }]);
    // A continuation already on its way is not sent twice.
    expect((await post(server, `/api/v1/threads/${id}/resume`, {})).status).toBe(409);
  });

  it("Retry now interrupts the wait, then continues once the relay confirms", async () => {
    const id = uid("retry-now");
    await send([
      { threadId: id, type: "turn.started", turnId: "u1" },
      { threadId: id, type: "retry", turnId: "u1", attempt: 1, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "120" } },
    ]);
    const answer = await post(server, `/api/v1/threads/${id}/retry`, {});
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    const interrupt = ((await poll()).body.directives as { id: string; threadId: string; kind: string }[]).find((d) => d.threadId === id);
    expect(interrupt).toMatchObject({ kind: "interrupt" });
    expect((await post(server, `/api/v1/directives/${interrupt!.id}/ack`, { result: "acknowledged" })).status).toBe(200);
    const detail = await threadDetail(server, id);
    expect(detail.thread.status).toBe("recovery_scheduled");
    expect(detail.directives.map((d: { kind: string; origin: string }) => [d.kind, d.origin])).toEqual([
      ["interrupt", "operator"],
      ["continue", "operator"],
    ]);
    expect(await audit(id)).toEqual([{ action: "retry-now", result: "sent" }]);
  });

  it("a thread in no state for it, or a source that cannot continue, gets nothing (409), audited", async () => {
    const id = uid("running");
    await send([{ threadId: id, type: "turn.started", turnId: "u1" }]);
    expect((await post(server, `/api/v1/threads/${id}/resume`, {})).status).toBe(409);
    const failed = uid("one-shot");
    await send([
      { threadId: failed, type: "turn.started", turnId: "u1" },
      { threadId: failed, type: "turn.failed", turnId: "u1", error: { httpStatus: 500 } },
    ]);
    await poll(0, "interrupt");
    try {
      const refused = await post(server, `/api/v1/threads/${failed}/resume`, {});
      expect(refused.status).toBe(409);
      expect(refused.body.title).toBe("Nothing can reach this agent");
      expect((await threadDetail(server, failed)).directives).toEqual([]);
      expect(await audit(failed)).toEqual([{ action: "resume", result: "unreachable" }]);
    } finally {
      await poll();
    }
  });
});

describe("archive and snooze", () => {
  it("archive hides the thread from the board and cancels its pending resume; unarchive shows it again", async () => {
    await setResumeAtReset(true);
    try {
      const id = uid("archive");
      await usageLimited(id, 60 * 60_000);
      expect((await threadDetail(server, id)).state.recovery).toMatchObject({ policy: "resume-at-reset", state: "scheduled" });
      const listed = async (query = "") => (await get(server, `/api/v1/threads?q=${id}${query}`)).body.threads.map((t: { id: string }) => t.id);
      expect(await listed()).toEqual([id]);

      expect((await post(server, `/api/v1/threads/${id}/archive`, {})).body).toMatchObject({ result: "archived" });
      expect(await listed()).toEqual([]);
      expect(await listed("&archived=show")).toEqual([id]);
      const archived = await threadDetail(server, id);
      expect(archived.thread.archivedAt).not.toBeNull();
      expect(archived.state.recovery).toMatchObject({ state: "cancelled", cancelledReason: "the thread was archived or snoozed" });

      const restored = await server.fetch(`/api/v1/threads/${id}/archive`, { method: "DELETE" });
      expect(restored.status).toBe(200);
      expect(await listed()).toEqual([id]);
      expect(await audit(id)).toEqual([
        { action: "archive", result: "archived" },
        { action: "unarchive", result: "unarchived" },
      ]);
    } finally {
      await setResumeAtReset(false);
    }
  });

  it("snooze hides the thread until the time given; unsnooze wakes it", async () => {
    const id = uid("snooze");
    await send([{ threadId: id, type: "turn.started", turnId: "u1" }]);
    const until = new Date(Date.now() + 60 * 60_000).toISOString();
    expect((await post(server, `/api/v1/threads/${id}/snooze`, { until })).body).toMatchObject({ result: "snoozed" });
    expect((await get(server, `/api/v1/threads?q=${id}`)).body.threads).toEqual([]);
    expect((await server.fetch(`/api/v1/threads/${id}/snooze`, { method: "DELETE" })).status).toBe(200);
    expect((await get(server, `/api/v1/threads?q=${id}`)).body.threads).toHaveLength(1);
    expect((await audit(id)).map((a) => a.action)).toEqual(["snooze", "unsnooze"]);
  });
});

describe("resume at reset", () => {
  it(
    "a usage-limited thread is continued at its window's reset, and the continuation runs",
    async () => {
      await setResumeAtReset(true);
      try {
        const id = uid("reset");
        await usageLimited(id, 3_000);
        const scheduled = await threadDetail(server, id);
        expect(scheduled.thread.status).toBe("recovery_scheduled");
        expect(scheduled.thread.resumeAt).not.toBeNull();
        // The relay long-polls; the watchdog sends the continue when the window has reset.
        const until = Date.now() + PATIENCE_MS;
        type Delivered = { id: string; kind: string; threadId: string };
        let delivered: Delivered | undefined;
        while (!delivered && Date.now() < until) {
          const answer = await poll(10);
          delivered = (answer.body.directives as Delivered[]).find((d) => d.threadId === id);
        }
        expect(delivered).toMatchObject({ kind: "continue" });
        expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(scheduled.thread.resetAt));
        expect((await post(server, `/api/v1/directives/${delivered!.id}/ack`, { result: "acknowledged" })).status).toBe(200);
        await send([{ threadId: id, type: "turn.started", turnId: "c1" }]);
        const after = await threadDetail(server, id);
        expect(after.thread.status).toBe("running");
        expect(after.state.recovery).toMatchObject({ policy: "resume-at-reset", state: "fired", turnId: "c1" });
      } finally {
        await setResumeAtReset(false);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it("Cancel (a stop) calls a scheduled resume off: no continue is ever sent", async () => {
    await setResumeAtReset(true);
    try {
      const id = uid("cancel");
      await usageLimited(id, 60 * 60_000);
      expect((await post(server, `/api/v1/threads/${id}/stop`, { reason: "Cancel resume at reset" })).status).toBe(202);
      const detail = await threadDetail(server, id);
      expect(detail.thread.status).toBe("stopped");
      expect(detail.state.recovery).toMatchObject({ state: "cancelled", cancelledReason: "stopped by operator" });
      expect(detail.directives).toEqual([]);
    } finally {
      await setResumeAtReset(false);
    }
  });

  it("turning the setting off cancels a scheduled resume", async () => {
    await setResumeAtReset(true);
    const id = uid("off");
    await usageLimited(id, 60 * 60_000);
    await setResumeAtReset(false);
    expect((await threadDetail(server, id)).state.recovery).toMatchObject({ state: "cancelled", cancelledReason: "resume at reset was turned off" });
  });
});

describe("the board's Reset column", () => {
  it("a thread waiting on a usage window names that window's row on /limits", async () => {
    const id = uid("window");
    const resetAt = new Date(Math.ceil((Date.now() + 60 * 60_000) / 1000) * 1000);
    await send([{ type: "limit.updated", provider: "anthropic", account: "board-link", window: "five_hour", usedPercent: 100, resetsAt: resetAt.toISOString(), status: "rejected" }]);
    await usageLimited(id, resetAt.getTime() - Date.now());
    const windows = (await get(server, "/api/v1/limits")).body.windows as { key: string; account: string | null }[];
    const row = windows.find((w) => w.account === "board-link")!;
    const [thread] = (await get(server, `/api/v1/threads?q=${id}`)).body.threads;
    expect(thread).toMatchObject({ id, limitKey: row.key });
  });
});
