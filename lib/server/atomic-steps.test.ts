import { beforeAll, describe, expect, it } from "vitest";
import type { NormalizedEvent, NormalizedLine } from "@/lib/ingest/types";
import { countUnitsOfWork, normalizedLines, useFreshDatabase } from "@/e2e/support/in-process";

/**
 * Atomic steps and time you can trust, in process on a real SQLite file: an acknowledgement
 * commits with its effect, a stop with its audit row, many threads go in bounded units of work,
 * one poison thread never holds back the others' deadlines, and a source clock far ahead is
 * clamped.
 */
useFreshDatabase("atomic");
process.env.RADAR_STOP_GRACE_MS = "60000";

type Modules = {
  pipeline: typeof import("./pipeline");
  directives: typeof import("./directives");
  stop: typeof import("./stop");
  tokens: typeof import("./tokens");
  client: typeof import("@/lib/db/client");
  uow: typeof import("@/lib/db/unit-of-work");
};
let m: Modules;
beforeAll(async () => {
  m = {
    pipeline: await import("./pipeline"),
    directives: await import("./directives"),
    stop: await import("./stop"),
    tokens: await import("./tokens"),
    client: await import("@/lib/db/client"),
    uow: await import("@/lib/db/unit-of-work"),
  };
});

const lines = (events: Partial<NormalizedEvent>[], receivedAt: number): NormalizedLine[] =>
  normalizedLines(events, { receivedAt, base: { at: receivedAt, threadId: "t" } });
const sql = () => m.client.db().sql;
const threadRow = (sourceId: string, id: string) =>
  sql().prepare(`SELECT id, status, wakeAt, state, lastErrorMessage FROM "Thread" WHERE sourceId = ? AND externalId = ?`).get(sourceId, id) as {
    id: number;
    status: string;
    wakeAt: number | null;
    state: string;
    lastErrorMessage: string | null;
  };
const eventsOf = (threadKey: number, type: string) =>
  sql().prepare(`SELECT at, late, message, normalized FROM "Event" WHERE threadId = ? AND type = ? ORDER BY id`).all(threadKey, type) as {
    at: number;
    late: number;
    message: string | null;
    normalized: string;
  }[];
const auditOf = (target: string, action: string) =>
  sql().prepare(`SELECT actor, result, detail FROM "AuditEntry" WHERE target = ? AND action = ?`).all(target, action) as { actor: string; result: string; detail: string | null }[];
let sourceSeq = 0;
const source = (name: string) => m.tokens.createSource(`${name}-${++sourceSeq}`, `rr_${name}_${sourceSeq}_${Date.now()}`);

/** A thread stopping with an interrupt pending: returns its key and the directive's id. */
async function stoppingThread(s: Awaited<ReturnType<typeof source>>, threadId: string, now: number) {
  await m.pipeline.ingestLines(s, lines([{ threadId, type: "turn.started", turnId: "u1", at: now }], now), now);
  const key = threadRow(s.id, threadId).id;
  await m.stop.stopThreads([key], { actor: "test" }, "enough", now);
  const directive = sql().prepare(`SELECT id FROM "Directive" WHERE threadId = ? AND kind = 'interrupt'`).pluck().get(key) as string;
  return { key, directive };
}

/** How many units of work `run` committed or rolled back: each is one BEGIN IMMEDIATE. */
async function unitsOfWork(run: () => Promise<void>): Promise<number> {
  return (await countUnitsOfWork(sql(), run)).units;
}

describe("an acknowledgement and its effect", () => {
  it("commit together: the thread is stopped once the ack is recorded, and a repeat changes nothing", async () => {
    const s = await source("ack");
    const now = Date.now();
    const { key, directive } = await stoppingThread(s, "acked", now);
    expect(threadRow(s.id, "acked").status).toBe("stopping");
    const first = await m.directives.acknowledgeDirective(s.id, directive, "acknowledged", null, now + 10);
    expect(first).toMatchObject({ ok: true, repeated: false, threadStatus: "stopped" });
    expect(threadRow(s.id, "acked").status).toBe("stopped");
    const again = await m.directives.acknowledgeDirective(s.id, directive, "acknowledged", null, now + 20);
    expect(again).toMatchObject({ ok: true, repeated: true, threadStatus: null });
    expect(eventsOf(key, "directive.acked")).toHaveLength(1);
    expect(await m.directives.acknowledgeDirective(s.id, directive, "failed", null, now + 30)).toMatchObject({ ok: false, status: 409 });
  });

  it("a source's detail is stored with its credentials masked, like its payloads", async () => {
    const s = await source("ack-detail");
    const now = Date.now();
    const { key, directive } = await stoppingThread(s, "ack-detail", now);
    const detail = "interrupt failed: 401 from http://127.0.0.1:4500 with Authorization: Bearer rr_3q2-7wKpZx9LmNvB4cD8eF1gH5jK0lMn";
    expect(await m.directives.acknowledgeDirective(s.id, directive, "failed", detail, now + 10)).toMatchObject({ ok: true });
    const masked = "interrupt failed: 401 from http://127.0.0.1:4500 with Authorization: Bearer rr_…••••";
    expect(eventsOf(key, "directive.acked").map((event) => event.message)).toEqual([masked]);
    expect(sql().prepare(`SELECT detail FROM "Directive" WHERE id = ?`).pluck().get(directive)).toBe(masked);
  });

  it("a repeated ack heals one that was recorded but never applied to the thread", async () => {
    const s = await source("heal");
    const now = Date.now();
    const { key, directive } = await stoppingThread(s, "half", now);
    // What an older version could leave behind: the ack committed, the thread never told.
    await m.uow.transaction(async (tx) => tx.recordAck(s.id, directive, "acknowledged", null, now + 10));
    expect(threadRow(s.id, "half").status).toBe("stopping");
    const repeated = await m.directives.acknowledgeDirective(s.id, directive, "acknowledged", null, now + 20);
    expect(repeated).toMatchObject({ ok: true, repeated: true, threadStatus: "stopped" });
    expect(eventsOf(key, "directive.acked")).toHaveLength(1);
  });

  it("nothing is recorded when applying it fails", async () => {
    const s = await source("rollback");
    const now = Date.now();
    const { directive } = await stoppingThread(s, "poisoned-ack", now);
    sql().prepare(`UPDATE "Thread" SET state = '{' WHERE sourceId = ? AND externalId = ?`).run(s.id, "poisoned-ack");
    await expect(m.directives.acknowledgeDirective(s.id, directive, "acknowledged", null, now + 10)).rejects.toThrow();
    expect(sql().prepare(`SELECT acknowledgedAt FROM "Directive" WHERE id = ?`).pluck().get(directive)).toBeNull();
  });
});

describe("stops", () => {
  it("each stop commits with its audit row, stated with the thread's final status", async () => {
    const s = await source("audit");
    const now = Date.now();
    await m.pipeline.ingestLines(s, lines([{ threadId: "audited", type: "turn.started", turnId: "u1", at: now }], now), now);
    const key = threadRow(s.id, "audited").id;
    const [result] = await m.stop.stopThreads([key], { actor: "op" }, "why", now);
    expect(result).toMatchObject({ threadId: "audited", result: "stopping", status: "stopping" });
    expect(auditOf("audited", "stop")).toEqual([{ actor: "op", result: "stopping", detail: null }]);
  });

  it("a stop that cannot commit leaves no audit row claiming it happened", async () => {
    const s = await source("audit-fail");
    const now = Date.now();
    await m.pipeline.ingestLines(s, lines([{ threadId: "broken-state", type: "turn.started", turnId: "u1", at: now }], now), now);
    const key = threadRow(s.id, "broken-state").id;
    sql().prepare(`UPDATE "Thread" SET state = '{' WHERE id = ?`).run(key);
    await expect(m.stop.stopThreads([key], { actor: "op" }, "why", now)).rejects.toThrow();
    expect(auditOf("broken-state", "stop")).toEqual([]);
  });

  it("Stop all works in units of at most THREADS_PER_UNIT threads, every stop audited", async () => {
    const s = await source("many");
    const now = Date.now();
    const count = m.pipeline.THREADS_PER_UNIT * 2 + 17;
    const ids = Array.from({ length: count }, (_, i) => `m-${i}`);
    await m.pipeline.ingestLines(s, lines(ids.map((threadId) => ({ threadId, type: "turn.started" as const, turnId: "u1", at: now })), now), now);
    const keys = ids.map((id) => threadRow(s.id, id).id);
    const units = await unitsOfWork(async () => {
      const results = await m.stop.stopThreads(keys, { actor: "op" }, "all", now);
      expect(results.filter((r) => r.result === "stopping")).toHaveLength(count);
    });
    expect(units).toBe(Math.ceil(count / m.pipeline.THREADS_PER_UNIT));
    const audited = sql().prepare(`SELECT count(*) FROM "AuditEntry" WHERE action = 'stop-all' AND target LIKE 'm-%'`).pluck().get();
    expect(audited).toBe(count);
  });
});

describe("a policy change", () => {
  it("reaches every thread of the source in units of at most THREADS_PER_UNIT threads", async () => {
    const s = await source("policy");
    const now = Date.now();
    const count = m.pipeline.THREADS_PER_UNIT + 30;
    const ids = Array.from({ length: count }, (_, i) => `p-${i}`);
    await m.pipeline.ingestLines(s, lines(ids.map((threadId) => ({ threadId, type: "turn.started" as const, turnId: "u1", at: now })), now), now);
    const units = await unitsOfWork(async () => {
      const changed = await m.pipeline.applySourceSettings({ ...s, capacityRecovery: true }, now + 10);
      expect(changed).toHaveLength(count);
    });
    // One to read the source's threads, then the chunks.
    expect(units).toBe(1 + Math.ceil(count / m.pipeline.THREADS_PER_UNIT));
    const settings = sql().prepare(`SELECT count(*) FROM "Event" e JOIN "Thread" t ON t.id = e.threadId WHERE t.sourceId = ? AND e.type = 'settings.changed'`).pluck().get(s.id);
    expect(settings).toBe(count);
  });
});

describe("the watchdog", () => {
  /** Threads retrying with a deadline that has passed by `later`. */
  async function dueThreads(s: Awaited<ReturnType<typeof source>>, ids: string[], at: number) {
    await m.pipeline.ingestLines(
      s,
      lines(ids.flatMap((threadId) => [
        { threadId, type: "turn.started" as const, turnId: "u1", at },
        { threadId, type: "retry" as const, turnId: "u1", at, attempt: 1, error: { httpStatus: 429 } },
      ]), at),
      at,
    );
    return ids.map((id) => threadRow(s.id, id).id);
  }

  it("fires the deadlines of healthy threads when a poison thread throws, and quarantines it after repeated failures", async () => {
    const s = await source("poison");
    const at = Date.now() - 200_000;
    const keys = await dueThreads(s, ["healthy-1", "poison", "healthy-2"], at);
    sql().prepare(`UPDATE "Thread" SET state = '{"not": json' WHERE id = ?`).run(keys[1]);
    const later = at + 100_000; // past the deadline (notice + 65 s), inside the stop grace
    await m.pipeline.tickThreads(keys, later);
    for (const id of ["healthy-1", "healthy-2"]) expect(threadRow(s.id, id).status).toBe("exhausted");
    expect(threadRow(s.id, "poison").status).toBe("retrying");
    for (let pass = 1; pass < m.pipeline.QUARANTINE_AFTER_FAILURES; pass++) await m.pipeline.tickThreads([keys[1]], later + pass);
    const poison = threadRow(s.id, "poison");
    expect(poison).toMatchObject({ status: "broken", wakeAt: null });
    expect(poison.lastErrorMessage).toMatch(/watchdog could not tick the thread/);
    const [note] = eventsOf(keys[1], "thread.quarantined");
    expect(note.message).toMatch(/watchdog could not tick the thread/);
    expect(auditOf("poison", "quarantine")).toEqual([{ actor: "watchdog", result: "broken", detail: poison.lastErrorMessage }]);
  });
});

describe("event times far ahead of the receive time", () => {
  it("are clamped to it, flagged, and later events stay in order", async () => {
    const s = await source("skew");
    const now = Date.now();
    const ahead = now + 24 * 3_600_000;
    await m.pipeline.ingestLines(s, lines([{ threadId: "skewed", type: "turn.started", turnId: "u1", at: ahead }], now), now);
    const key = threadRow(s.id, "skewed").id;
    const [started] = eventsOf(key, "turn.started");
    expect(started.at).toBe(now);
    expect(JSON.parse(started.normalized)).toMatchObject({ clampedFrom: ahead });
    expect(sql().prepare(`SELECT raw FROM "Event" WHERE threadId = ? AND type = 'turn.started'`).pluck().get(key)).toContain(String(ahead));
    await m.pipeline.ingestLines(s, lines([{ threadId: "skewed", type: "retry", turnId: "u1", at: now + 1_000, attempt: 1, error: { httpStatus: 429 } }], now + 1_000), now + 1_000);
    expect(eventsOf(key, "retry")[0].late).toBe(0);
    expect(threadRow(s.id, "skewed").status).toBe("retrying");
    expect((JSON.parse(threadRow(s.id, "skewed").state) as { lastEventAt: number }).lastEventAt).toBe(now + 1_000);
  });

  it("within the tolerance are kept as sent", async () => {
    const s = await source("small-skew");
    const now = Date.now();
    const ahead = now + m.pipeline.MAX_CLOCK_AHEAD_MS - 1_000;
    await m.pipeline.ingestLines(s, lines([{ threadId: "slightly", type: "turn.started", turnId: "u1", at: ahead }], now), now);
    const [started] = eventsOf(threadRow(s.id, "slightly").id, "turn.started");
    expect(started.at).toBe(ahead);
    expect(JSON.parse(started.normalized).clampedFrom).toBeUndefined();
  });

  it("cannot delay stopping → broken: the stop's grace runs on the server's clock", async () => {
    const s = await source("skew-stop");
    const now = Date.now();
    await m.pipeline.ingestLines(s, lines([{ threadId: "far", type: "turn.started", turnId: "u1", at: now + 24 * 3_600_000 }], now), now);
    const key = threadRow(s.id, "far").id;
    await m.stop.stopThreads([key], { actor: "op" }, "stop", now + 10);
    expect(threadRow(s.id, "far").status).toBe("stopping");
    // The unacknowledged stop turns broken one grace (60 s here) after the operator asked.
    await m.pipeline.tickThreads([key], now + 10 + 60_000 + 1_000);
    expect(threadRow(s.id, "far").status).toBe("broken");
  });
});
