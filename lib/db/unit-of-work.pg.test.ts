import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exec, insertSource, STORES, tableRows, useStore, type TestStore, type Row } from "@/e2e/support/both-stores";
import { generator } from "@/e2e/support/seeded";
import type { NormalizedEvent, NormalizedLine } from "@/lib/ingest/types";
import type { SourceRecord } from "./records/sources";

/**
 * The unit of work's contract on both stores: the same lines through the real pipeline (batches
 * with replays, label changes, limits, the watchdog, stops) leave the same rows on SQLite and on
 * PostgreSQL — threads and their states, events, episodes, attempts, turns, directives,
 * incidents, audit and every rollup — a resend stores nothing twice, and a unit of work that
 * throws leaves nothing. Rows are read with plain SQL, times as epoch ms and flags as 0/1 on both.
 */
process.env.RADAR_STOP_GRACE_MS = "60000";

const SOURCE: SourceRecord = { id: "src-contract", name: "contract", policy: null, capacityRecovery: false, resumeAtReset: false, incidentMinThreads: null, incidentWindowMs: null };
const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);

const sortedKeys = (row: Row) => Object.fromEntries(Object.entries(row).sort(([a], [b]) => (a < b ? -1 : 1)));
const ordered = (rows: Row[]) => rows.map(sortedKeys).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
const without = (rows: Row[], ...columns: string[]) => rows.map((row) => Object.fromEntries(Object.entries(row).filter(([c]) => !columns.includes(c))));

/**
 * What a store holds after the scenario. Ids a store draws per attempt (upserted rows' ids, random
 * directive ids) are left out; an attempt names its episode by (thread, seq). Event and thread
 * ids are compared: both stores number them alike when nothing was folded or rolled back.
 */
async function snapshot(store: TestStore): Promise<Record<string, Row[]>> {
  const episodes = await tableRows(store, "Episode");
  const episodeKey = new Map(episodes.map((e) => [e.id, `${e.threadId}:${e.seq}`]));
  const attempts = (await tableRows(store, "Attempt")).map(({ episodeId, ...row }) => ({ ...row, episode: episodeKey.get(episodeId) }));
  const out: Record<string, Row[]> = {
    Episode: without(episodes, "id"),
    Attempt: without(attempts, "id"),
    Turn: without(await tableRows(store, "Turn"), "id"),
    Directive: without(await tableRows(store, "Directive"), "id"),
    AuditEntry: without(await tableRows(store, "AuditEntry"), "id"),
    LimitSnapshot: without(await tableRows(store, "LimitSnapshot"), "id"),
  };
  // The server's own lines have random keys.
  out.Event = (await tableRows(store, "Event")).map((row) => ({ ...row, idempotencyKey: String(row.idempotencyKey).replace(/^radar:.*/, "radar:…") }));
  for (const table of ["Thread", "IngestKey", "Source", "LimitWindow", "Rollup", "RollupHour", "MetricTotal", "ThreadWaitTotal", "AlertCondition"]) {
    out[table] = await tableRows(store, table);
  }
  // A thread list's revision is a fresh random id per save (records/incidents.ts KnownIncidentThreads).
  out.Incident = without(await tableRows(store, "Incident"), "revision");
  return Object.fromEntries(Object.entries(out).map(([table, rows]) => [table, ordered(rows)]));
}

async function threadIds(store: TestStore): Promise<number[]> {
  return (await tableRows(store, "Thread")).map((row) => row.id as number).sort((a, b) => a - b);
}

/** The scenario: the same lines and passes on either store. */
async function run(store: TestStore): Promise<void> {
  const pipeline = await import("@/lib/server/pipeline");
  const rnd = generator(11);
  let key = 0;
  const line = (event: Partial<NormalizedEvent>, receivedAt: number, extra: Partial<NormalizedLine> = {}): NormalizedLine => ({
    index: 0,
    event: { type: "attempt", at: receivedAt, threadId: "t", ...event } as NormalizedEvent,
    nativeType: null,
    format: "canonical",
    idempotencyKey: `k${++key}`,
    raw: event,
    receivedAt,
    ...extra,
  });
  const providers = [["openai", "gpt-5"], ["anthropic", "claude-opus"], [null, null]] as const;
  let clock = T0;
  for (let round = 0; round < 30; round++) {
    const batch: NormalizedLine[] = [];
    for (let i = 0; i < 1 + rnd.int(6); i++) {
      const threadId = `th-${rnd.int(6)}`;
      const [provider, model] = rnd.pick(providers);
      const agent = rnd.pick(["codex", "claude", null]);
      // Sometimes in the past: the thread replays from its stored events.
      const at = clock - (rnd.next() < 0.15 ? rnd.int(10) * 60_000 : 0) + rnd.int(90_000);
      const turnId = `u${rnd.int(3)}`;
      const type = rnd.pick(["retry", "retry", "retry", "attempt", "turn.started", "turn.completed", "turn.failed"] as const);
      const event: Partial<NormalizedEvent> = { threadId, type, at, turnId, provider, model, agent };
      if (type === "retry") Object.assign(event, { attempt: 1 + rnd.int(4), maxAttempts: 5, delayMs: rnd.pick([null, 500, 2_000, 30_000]), error: { httpStatus: rnd.pick([429, 503, 500, 529]) } });
      if (type === "attempt") event.attempt = 1 + rnd.int(4);
      const limits = rnd.next() < 0.2 ? [{ provider: "openai", window: "5h", account: null, usedPercent: rnd.int(100), windowMinutes: 300, resetAt: clock + 3_600_000, status: "allowed", observedAt: at, threadId, reachedType: null }] : undefined;
      batch.push(line(event, clock + 120_000, limits ? ({ limits } as Partial<NormalizedLine>) : {}));
    }
    clock += rnd.int(5) * 60_000;
    const outcome = await pipeline.ingestLines(SOURCE, batch, clock + 120_000);
    expect(outcome.accepted).toBe(batch.length);
    if (round % 5 === 4) await pipeline.tickThreads(await threadIds(store), clock + 3_600_000);
    if (round % 7 === 6) {
      const ids = await threadIds(store);
      const id = ids[rnd.int(ids.length)];
      await pipeline.withInternalEvents(clock + 120_000, async (apply, tx) => {
        await apply(id, { type: "stop.requested", actor: "operator", reason: "contract" } as Parameters<typeof apply>[1]);
        await tx.insertAudit({ at: clock + 120_000, actor: "operator", action: "thread.stop", target: String(id), result: "ok" });
      });
    }
  }
}

const snapshots = new Map<TestStore, Record<string, Row[]>>();
const foldings = new Map<TestStore, unknown>();
const quarantines = new Map<TestStore, unknown>();

describe.each(STORES)("a unit of work on %s", (store) => {
  useStore(store);
  beforeAll(() => insertSource(store, SOURCE, T0));

  it("ingests, ticks and stops through the pipeline", async () => {
    await run(store);
    snapshots.set(store, await snapshot(store));
    const counts = Object.fromEntries(Object.entries(snapshots.get(store)!).map(([table, rows]) => [table, rows.length]));
    // What the comparison below covers.
    for (const table of ["Episode", "Attempt", "Turn", "Directive", "Incident", "LimitWindow", "Rollup", "MetricTotal", "ThreadWaitTotal"]) expect(counts[table], table).toBeGreaterThan(0);
    expect(snapshots.get(store)!.Event.length).toBeGreaterThan(50);
  });

  it("keeps rollups equal to the raw aggregation of what it stored", async () => {
    if (store === "sqlite") return; // lib/db/rollups.test.ts proves it on SQLite, on more data
    const { pool } = await import("./postgres/pool");
    const { factsSql } = await import("./postgres/rollups");
    const { msFromTimestamp } = await import("./postgres/time");
    const values = ["n", "ms", "waited", "judged", "early", "earlyMs"];
    const nonZero = (rows: Row[]) => ordered(rows.filter((row) => values.some((v) => Number(row[v]) !== 0)));
    const stored = (await pool().query<Row>(`SELECT *, ${msFromTimestamp("minute")} AS minute FROM "Rollup"`)).rows;
    const raw = (await pool().query<Row>(factsSql("true", "true"))).rows;
    expect(raw.length).toBeGreaterThan(0);
    expect(nonZero(stored)).toEqual(nonZero(raw));
  });

  it("rebuilds the rollups to what its units of work kept", async () => {
    const { rebuildAllRollups } = await import("./rollups");
    const tables = ["Rollup", "RollupHour", "MetricTotal", "ThreadWaitTotal"];
    // A counter that went back to zero leaves its row behind; a rebuild writes none for it.
    const kept = async () =>
      Object.fromEntries(
        await Promise.all(tables.map(async (table) => [table, ordered((await tableRows(store, table)).filter((row) => ["n", "ms"].some((v) => Number(row[v] ?? 0) !== 0)))] as const)),
      );
    const before = await kept();
    expect(before.Rollup.length).toBeGreaterThan(0);
    const counts = await rebuildAllRollups();
    expect(await kept()).toEqual(before);
    expect(counts.rollups).toBeGreaterThanOrEqual(before.Rollup.length);
  });

  it("keeps the longest window and the latest reset a line may carry (lib/ingest/limits.ts)", async () => {
    const { ingestLines } = await import("@/lib/server/pipeline");
    const { MAX_STORED_INT, MAX_STORED_TIME } = await import("@/lib/ingest/limits");
    const limit = { provider: "anthropic", window: "extreme", account: null, usedPercent: 1, windowMinutes: MAX_STORED_INT, resetAt: MAX_STORED_TIME, status: "ok", observedAt: T0, threadId: null };
    const extreme = { index: 0, event: null, nativeType: null, format: "canonical", idempotencyKey: "extreme", raw: {}, receivedAt: T0, limits: [limit] } as NormalizedLine;
    expect(await ingestLines(SOURCE, [extreme], T0)).toMatchObject({ accepted: 1 });
    expect((await tableRows(store, "LimitWindow")).find((row) => row.window === "extreme")).toMatchObject({ windowMinutes: MAX_STORED_INT, resetAt: MAX_STORED_TIME });
  });

  it("gives a usage limit named to the minute the exact reset the source reported for that minute (lib/retry/advice.ts minuteOnlyResetRange)", async () => {
    const { ingestLines } = await import("@/lib/server/pipeline");
    const minute = T0 + 3_600_000;
    const at = minute - 2_000;
    // The thread's own account's window, and another account's resetting later in the same minute.
    const limit = { provider: "openai", window: "primary", account: "mine", usedPercent: 100, windowMinutes: 300, resetAt: minute + 4_000, status: "rejected", observedAt: at - 500, threadId: "minute" };
    const other = { ...limit, account: "other", resetAt: minute + 30_000, threadId: null };
    const limits = { index: 0, event: null, nativeType: null, format: "canonical", idempotencyKey: "minute-limits", raw: {}, receivedAt: at - 500, limits: [limit, other] } as NormalizedLine;
    const message = `You've hit your usage limit. Try again at ${new Date(minute).toISOString().slice(11, 16)}.`;
    const failed = { index: 1, event: { type: "turn.failed", at, threadId: "minute", turnId: "u1", provider: "openai", error: { code: "usageLimitExceeded", message } } as NormalizedEvent, nativeType: null, format: "canonical", idempotencyKey: "minute-failed", raw: {}, receivedAt: at } as NormalizedLine;
    await ingestLines(SOURCE, [limits], at);
    await ingestLines(SOURCE, [failed], at);
    expect((await tableRows(store, "Thread")).find((row) => row.externalId === "minute")).toMatchObject({ status: "waiting_reset", resetAt: minute + 4_000 });
  });

  it("joins one agent thread's two paths in batches that name many threads, whichever path came first (lib/db/thread-join.ts)", async () => {
    const { ingestLines } = await import("@/lib/server/pipeline");
    const { OTLP_FORMAT } = await import("@/lib/ingest/types");
    const otel: SourceRecord = { ...SOURCE, id: "src-otel", name: "otel" };
    await insertSource(store, otel, T0);
    let key = 0;
    const batch = (format: NormalizedLine["format"], threadIds: string[], at: number): NormalizedLine[] =>
      threadIds.flatMap((threadId) =>
        (["turn.started", "retry"] as const).map((type, i) => ({
          index: 0,
          event: { type, at: at + i, threadId, turnId: "u1", agent: "claude-code", ...(type === "retry" ? { attempt: 1, error: { httpStatus: 429 } } : {}) } as NormalizedEvent,
          nativeType: null,
          format,
          idempotencyKey: `join-${++key}`,
          raw: {},
          receivedAt: at,
        })),
      );
    // Relay first for "a", OpenTelemetry first for "b"; "solo-*" only on their own path.
    await ingestLines(SOURCE, batch("claude", ["join-a", "solo-relay-1", "solo-relay-2"], T0 + 7_200_000), T0 + 7_200_000);
    await ingestLines(otel, batch(OTLP_FORMAT, ["solo-otel", "join-a", "join-b"], T0 + 7_201_000), T0 + 7_201_000);
    await ingestLines(SOURCE, batch("claude", ["solo-relay-3", "join-b"], T0 + 7_202_000), T0 + 7_202_000);
    const threads = (await tableRows(store, "Thread")).filter((row) => /^(join|solo)-/.test(String(row.externalId)));
    const idOf = (sourceId: string, externalId: string) => threads.find((row) => row.sourceId === sourceId && row.externalId === externalId)!;
    for (const id of ["join-a", "join-b"]) {
      expect(idOf(otel.id, id).joinedTo, id).toBe(idOf(SOURCE.id, id).id);
      expect(idOf(SOURCE.id, id).joinedTo, id).toBeNull();
    }
    for (const row of threads.filter((row) => String(row.externalId).startsWith("solo-"))) expect(row.joinedTo, String(row.externalId)).toBeNull();
    expect(threads).toHaveLength(8);
  });

  it("stores nothing twice when a batch is sent again, in one batch or two", async () => {
    const { ingestLines } = await import("@/lib/server/pipeline");
    const lines: NormalizedLine[] = [0, 1, 2].map((i) => ({
      index: i,
      event: { type: "retry", at: T0 + i, threadId: "resent", attempt: i + 1, error: { httpStatus: 429 } } as NormalizedEvent,
      nativeType: null,
      format: "canonical",
      idempotencyKey: `resent-${i}`,
      raw: {},
      receivedAt: T0 + 10,
    }));
    const before = (await tableRows(store, "Event")).length;
    expect(await ingestLines(SOURCE, [...lines, lines[0]], T0 + 10)).toMatchObject({ accepted: 3, duplicates: 1 });
    expect(await ingestLines(SOURCE, lines, T0 + 20)).toMatchObject({ accepted: 0, duplicates: 3 });
    expect((await tableRows(store, "Event")).length).toBe(before + 3);
  });

  it("knows a line stored before derived keys carried its time, by the key's earlier form (lib/ingest/key.ts)", async () => {
    const { ingestLines } = await import("@/lib/server/pipeline");
    const { normalizeBatch } = await import("@/lib/ingest");
    const { earlierKey } = await import("@/lib/ingest/key");
    const at = T0 + 40 * 60_000;
    // Progress right after progress folds into its row: the second line's key is kept in the key ledger.
    const items = ["turn.started", "progress", "progress"].map((type, i) => ({ threadId: "earlier-keys", turnId: "u1", type, at: at + i }));
    const lines = () => normalizeBatch("canonical", items, { receivedAt: at + 10 }).lines;
    expect(await ingestLines(SOURCE, lines(), at + 10)).toMatchObject({ accepted: 3, duplicates: 0 });
    // As a store written before the change holds them.
    for (const key of lines().map((line) => line.idempotencyKey)) {
      const earlier = earlierKey(key);
      expect(earlier, key).not.toBeNull();
      await exec(store, `UPDATE "Event" SET idempotencyKey = ? WHERE idempotencyKey = ?`, () => `UPDATE "Event" SET "idempotencyKey" = $1 WHERE "idempotencyKey" = $2`, [earlier, key]);
      await exec(store, `UPDATE "IngestKey" SET key = ? WHERE key = ?`, () => `UPDATE "IngestKey" SET key = $1 WHERE key = $2`, [earlier, key]);
    }
    const stored = [...(await tableRows(store, "Event")), ...(await tableRows(store, "IngestKey"))].map((row) => String(row.idempotencyKey ?? row.key));
    expect(stored.filter((key) => lines().some((line) => earlierKey(line.idempotencyKey) === key))).toHaveLength(3);
    // Sent again, a minute later: nothing is stored twice.
    expect(await ingestLines(SOURCE, normalizeBatch("canonical", items, { receivedAt: at + 60_000 }).lines, at + 60_000)).toMatchObject({ accepted: 0, duplicates: 3 });
  });

  it("folds progress into the open progress row, its keys kept", async () => {
    const { ingestLines } = await import("@/lib/server/pipeline");
    const at = T0 + 50 * 60_000;
    const lines = (from: number, types: string[]): NormalizedLine[] =>
      types.map((type, i) => ({
        index: i,
        event: { type, at: at + from + i * 1_000, threadId: "folding", turnId: "u1", progressCount: 1 } as NormalizedEvent,
        nativeType: null,
        format: "canonical",
        idempotencyKey: `fold-${from + i}`,
        raw: {},
        receivedAt: at + 60_000,
      }));
    await ingestLines(SOURCE, lines(0, ["turn.started", "progress", "progress", "progress"]), at + 60_000);
    await ingestLines(SOURCE, lines(10, ["progress", "progress", "retry", "progress"]), at + 60_000);
    const thread = (await tableRows(store, "Thread")).find((row) => row.externalId === "folding")!;
    const events = (await tableRows(store, "Event")).filter((row) => row.threadId === thread.id).sort((a, b) => Number(a.at) - Number(b.at) || Number(a.id) - Number(b.id));
    const keys = (await tableRows(store, "IngestKey")).filter((row) => events.some((e) => e.id === row.eventId));
    const folds = { events: events.map(({ type, count, lastAt, normalized }) => ({ type, count, lastAt, normalized })), keys: keys.map((k) => k.key).sort(), status: thread.status };
    // Every line is an event or a fold into one, and a folded line keeps its key.
    const folded = folds.events.reduce((sum, e) => sum + Number(e.count) - 1, 0);
    expect(folded).toBeGreaterThan(0);
    expect(folds.events.length + folded).toBe(8);
    expect(folds.keys).toHaveLength(folded);
    foldings.set(store, folds);
  });

  it("quarantines a thread, whether its stored state parses or not", async () => {
    const { ingestLines } = await import("@/lib/server/pipeline");
    const { transaction } = await import("./unit-of-work");
    const at = T0 + 70 * 60_000;
    const retry = (threadId: string): NormalizedLine => ({
      index: 0,
      event: { type: "retry", at, threadId, attempt: 1, maxAttempts: 5, delayMs: 60_000, error: { httpStatus: 503 } } as NormalizedEvent,
      nativeType: null,
      format: "canonical",
      idempotencyKey: `quarantine-${threadId}`,
      raw: {},
      receivedAt: at,
    });
    await ingestLines(SOURCE, [retry("sick"), retry("garbled")], at);
    const threads = await tableRows(store, "Thread");
    const [sick, garbled] = ["sick", "garbled"].map((name) => threads.find((row) => row.externalId === name)!.id as number);
    await exec(store, `UPDATE "Thread" SET state = 'not json' WHERE id = ?`, () => `UPDATE "Thread" SET state = 'not json' WHERE id = $1`, [garbled]);
    const transitions = await transaction(async (tx) => [await tx.quarantineThread(sick, "cannot tick", at + 1), await tx.quarantineThread(garbled, "cannot parse", at + 1)]);
    expect(transitions.map((t) => t?.status)).toEqual(["broken", "broken"]);
    const after = (await tableRows(store, "Thread")).filter((row) => row.id === sick || row.id === garbled);
    const notes = (await tableRows(store, "Event")).filter((row) => row.type === "thread.quarantined");
    expect(after.find((row) => row.id === garbled)!.state).toBe("not json");
    expect(JSON.parse(String(after.find((row) => row.id === sick)!.state))).toMatchObject({ status: "broken", wakeAt: null });
    quarantines.set(store, {
      // The sequence of its last event, which ids an earlier fold left unused make differ on PostgreSQL.
      threads: ordered(without(after, "id").map((row) => ({ ...row, state: String(row.state).replace(/"lastSeq":\d+/, '"lastSeq":…') }))),
      notes: ordered(without(notes, "id", "idempotencyKey")),
      transitions: transitions.map((t) => t && { ...t, key: undefined, lastSeq: undefined }),
    });
  });

  it("leaves nothing when it throws, whatever it wrote before", async () => {
    const { transaction } = await import("./unit-of-work");
    const before = await snapshot(store);
    const failing = transaction(async (tx) => {
      const thread = await tx.createThread(SOURCE.id, "never", { status: "idle", settings: {} } as never, T0);
      await tx.insertEvent({ sourceId: SOURCE.id, threadId: thread.id, idempotencyKey: "never-1", format: "canonical", nativeType: null, event: { type: "attempt", at: T0, threadId: "never" }, kind: null, receivedAt: T0, raw: {} });
      await tx.insertAudit({ at: T0, actor: "test", action: "never", result: "ok" });
      // A later statement writes the events held back (PostgreSQL), so they too must roll back.
      await tx.touchSource(SOURCE.id, T0 + 99_000_000);
      await tx.insertEvent({ sourceId: SOURCE.id, threadId: thread.id, idempotencyKey: "never-2", format: "canonical", nativeType: null, event: { type: "attempt", at: T0, threadId: "never" }, kind: null, receivedAt: T0, raw: {} });
      throw new Error("the unit of work fails");
    });
    await expect(failing).rejects.toThrow("the unit of work fails");
    expect(await snapshot(store)).toEqual(before);
    // The next unit of work runs as usual.
    expect(await transaction(async (tx) => tx.storedKeys(SOURCE.id, ["never-1", "resent-0"]))).toEqual(new Set(["resent-0"]));
  });

  it("runs its commit steps once it is done, in its transaction; a step that throws leaves nothing", async () => {
    const { transaction } = await import("./unit-of-work");
    const log: string[] = [];
    const step: import("./unit-of-work").CommitStep<number> = {
      async run(tx, inputs) {
        log.push(`step ${inputs.join(" ")}`);
        await tx.insertAudit({ at: T0, actor: "test", action: "commit-step", result: "ok" });
        if (inputs.includes(0)) throw new Error("the step fails");
      },
    };
    await transaction(async (_tx, atCommit) => {
      atCommit(step, 1);
      atCommit(step, 2);
      log.push("work");
    });
    expect(log).toEqual(["work", "step 1 2"]);
    const steps = async () => (await tableRows(store, "AuditEntry")).filter((row) => row.action === "commit-step").length;
    expect(await steps()).toBe(1);
    const before = await snapshot(store);
    await expect(
      transaction(async (tx, atCommit) => {
        await tx.touchSource(SOURCE.id, T0 + 99_000_000);
        atCommit(step, 0);
      }),
    ).rejects.toThrow("the step fails");
    expect(await snapshot(store)).toEqual(before);
  });

  it("folds an incident's thread list as stored: another writer's is read again, a save rolled back is never taken for stored", async () => {
    const { transaction } = await import("./unit-of-work");
    const pipeline = await import("@/lib/server/pipeline");
    const { normalizeBatch, withoutIgnored } = await import("@/lib/ingest");
    const at = T0 + 10 * 60 * 60_000;
    const retry = (threadId: string, ms: number) => ({
      threadId, type: "retry", at: new Date(ms).toISOString(), turnId: "u1", attempt: 1, maxAttempts: 5, provider: "openai", model: "o-revision",
      error: { httpStatus: 429, message: "Rate limit reached." },
    });
    const send = (items: Record<string, unknown>[], receivedAt: number) =>
      pipeline.ingestLines(SOURCE, withoutIgnored(normalizeBatch("canonical", items, { receivedAt }).lines).lines, receivedAt);
    const incident = async () => (await tableRows(store, "Incident")).find((row) => row.model === "o-revision" && row.state === "open")!;
    const members = async () => (JSON.parse(String((await incident()).threads)) as { thread: number }[]).map((t) => t.thread);
    await send(["r1", "r2", "r3"].map((id, i) => retry(id, at + i * 1000)), at + 2_000);
    const opened = await incident();
    // A unit of work saves the incident with a thread 888, and is rolled back.
    await expect(
      transaction(async (tx) => {
        const [active] = (await tx.activeIncidents()).filter((row) => row.id === opened.id);
        await tx.saveIncident({ ...active, notices: active.notices + 1, threads: [...active.threads, { thread: 888, sourceId: SOURCE.id, firstNoticeAt: at + 2_500, lastNoticeAt: at + 2_500, notices: 1, recoveredAt: null }] });
        await tx.touchSource(SOURCE.id, at + 2_500);
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    // Another writer saves thread 999 into it, under a revision of its own.
    const other = [...JSON.parse(String(opened.threads)), { thread: 999, sourceId: SOURCE.id, firstNoticeAt: at + 3_000, lastNoticeAt: at + 3_000, notices: 1, recoveredAt: null }];
    await exec(store, `UPDATE "Incident" SET threads = ?, "threadCount" = ?, revision = 'elsewhere' WHERE id = ?`, () => `UPDATE "Incident" SET threads = $1, "threadCount" = $2, revision = 'elsewhere' WHERE id = $3`, [
      JSON.stringify(other),
      other.length,
      opened.id,
    ]);
    await send([retry("r4", at + 4_000)], at + 4_000);
    const keys = new Map((await tableRows(store, "Thread")).map((row) => [row.id as number, row.externalId]));
    expect((await members()).map((key) => keys.get(key) ?? key)).toEqual(["r1", "r2", "r3", 999, "r4"]);
    expect(await incident()).toMatchObject({ id: opened.id, threadCount: 5 });
    // An instance of a version before the revision saves thread 777 into it, naming no revision
    // (a rolling upgrade): the list is read again, not taken for the one this process saved.
    const older = [...JSON.parse(String((await incident()).threads)), { thread: 777, sourceId: SOURCE.id, firstNoticeAt: at + 4_500, lastNoticeAt: at + 4_500, notices: 1, recoveredAt: null }];
    await exec(store, `UPDATE "Incident" SET threads = ?, "threadCount" = ? WHERE id = ?`, () => `UPDATE "Incident" SET threads = $1, "threadCount" = $2 WHERE id = $3`, [JSON.stringify(older), older.length, opened.id]);
    expect(await incident()).toMatchObject({ revision: "" });
    await send([retry("r5", at + 5_000)], at + 5_000);
    expect((await members()).map((key) => keys.get(key) ?? key)).toEqual(["r1", "r2", "r3", 999, "r4", 777, expect.any(Number)]);
    expect(await incident()).toMatchObject({ id: opened.id, threadCount: 7 });
    expect((await incident()).revision).not.toBe("");
    // A save of this version that leaves the list as it was keeps its revision.
    const revision = (await incident()).revision;
    await exec(store, `UPDATE "Incident" SET notices = notices + 1 WHERE id = ?`, () => `UPDATE "Incident" SET notices = notices + 1 WHERE id = $1`, [opened.id]);
    expect((await incident()).revision).toBe(revision);
  });
});

describe("both stores", () => {
  afterAll(() => {
    snapshots.clear();
    foldings.clear();
    quarantines.clear();
  });

  it("hold the same rows after the same lines", () => {
    const [sqlite, postgres] = [snapshots.get("sqlite"), snapshots.get("postgres")];
    expect(sqlite && postgres).toBeTruthy();
    const differing = Object.keys(sqlite!).filter((table) => JSON.stringify(postgres![table]) !== JSON.stringify(sqlite![table]));
    for (const table of differing) expect(postgres![table], table).toEqual(sqlite![table]);
  });

  it("fold progress alike", () => {
    expect(foldings.get("postgres")).toEqual(foldings.get("sqlite"));
  });

  it("quarantine alike", () => {
    expect(quarantines.get("postgres")).toEqual(quarantines.get("sqlite"));
  });
});
