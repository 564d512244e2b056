import { describe, expect, it } from "vitest";
import { exec, STORES, tableRows, useStore, type TestStore } from "@/e2e/support/both-stores";
import { createAlertDestination, createAlertRule, deleteAlertDestination, deleteAlertRule, enqueueTestAlert, pruneAlerts, silenceIncident } from "./alerts";
import { recordAudit } from "./audit";
import { acknowledgeIncident, annotateIncident } from "./incidents";
import { pruneLimitSnapshots } from "./limits";
import { PRUNE_START, pruneEvents } from "./retention";
import { takePendingDirectives } from "./directives";
import { addToken, countNewEvents, createSource, recordPoll, revokeToken, updateSourceSettings } from "./sources";
import { dueThreadIds, nextWakeAt } from "./thread-state";

/**
 * The writes outside a unit of work (audit, sources and tokens, directive delivery, the
 * watchdog's due threads, usage counting, alert destinations, rules and their retention, event retention, incident acknowledgements and notes, limit snapshots' retention) leave the same rows on both stores. Rows are read
 * with plain SQL, times as epoch ms and flags as 0/1 on both.
 */
const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);
const TOKEN = { tokenHash: "hash-1", prefix: "rr_1", label: "first" };

async function insertThread(store: TestStore, sourceId: string, externalId: string, wakeAt: number | null): Promise<number> {
  await exec(
    store,
    `INSERT INTO "Thread" (sourceId, externalId, status, state, createdAt, updatedAt, wakeAt) VALUES (?, ?, 'idle', '{}', ?, ?, ?)`,
    (ms) => `INSERT INTO "Thread" ("sourceId", "externalId", status, state, "createdAt", "updatedAt", "wakeAt") VALUES ($1, $2, 'idle', '{}', ${ms("$3")}, ${ms("$4")}, ${ms("$5")})`,
    [sourceId, externalId, T0, T0, wakeAt],
  );
  return (await tableRows(store, "Thread")).find((row) => row.externalId === externalId)!.id as number;
}

async function insertDirective(store: TestStore, id: string, sourceId: string, threadId: number, createdAt: number): Promise<void> {
  await exec(
    store,
    `INSERT INTO "Directive" (id, sourceId, threadId, dedupeKey, turnId, kind, origin, reason, state, createdAt) VALUES (?, ?, ?, ?, NULL, 'interrupt', 'operator', 'r', 'pending', ?)`,
    (ms) => `INSERT INTO "Directive" (id, "sourceId", "threadId", "dedupeKey", "turnId", kind, origin, reason, state, "createdAt") VALUES ($1, $2, $3, $4, NULL, 'interrupt', 'operator', 'r', 'pending', ${ms("$5")})`,
    [id, sourceId, threadId, id, createdAt],
  );
}

async function insertEvent(store: TestStore, sourceId: string, key: string, raw: string, at = T0, threadId: number | null = null): Promise<void> {
  await exec(
    store,
    `INSERT INTO "Event" (sourceId, threadId, idempotencyKey, format, type, at, receivedAt, raw, normalized) VALUES (?, ?, ?, 'canonical', 'x', ?, ?, ?, '{}')`,
    (ms) => `INSERT INTO "Event" ("sourceId", "threadId", "idempotencyKey", format, type, at, "receivedAt", raw, normalized) VALUES ($1, $2, $3, 'canonical', 'x', ${ms("$4")}, ${ms("$5")}, $6, '{}')`,
    [sourceId, threadId, key, at, at, raw],
  );
}

describe.each(STORES)("writes outside a unit of work on %s", (store) => {
  useStore(store);

  it("records audit entries, one or several together", async () => {
    await recordAudit({ at: T0, actor: "ada", action: "stop", target: "t1", result: "ok" });
    await recordAudit([
      { at: T0 + 1, actor: "bob", action: "snooze", reason: "noisy", result: "ok", detail: "{}" },
      { at: T0 + 2, actor: "bob", action: "archive", result: "refused" },
    ]);
    const rows = (await tableRows(store, "AuditEntry")).map(({ id: _, ...row }) => row).sort((a, b) => (a.at as number) - (b.at as number));
    expect(rows).toEqual([
      { at: T0, actor: "ada", action: "stop", target: "t1", reason: null, result: "ok", detail: null },
      { at: T0 + 1, actor: "bob", action: "snooze", target: null, reason: "noisy", result: "ok", detail: "{}" },
      { at: T0 + 2, actor: "bob", action: "archive", target: null, reason: null, result: "refused", detail: null },
    ]);
  });

  it("creates a source with its token, adds and revokes tokens, changes settings and records polls", async () => {
    const source = await createSource("laptop", TOKEN, T0);
    expect(source).toEqual({ id: source.id, name: "laptop", policy: null, capacityRecovery: false, resumeAtReset: false, incidentMinThreads: null, incidentWindowMs: null });
    const second = await addToken(source.id, { tokenHash: "hash-2", prefix: "rr_2", label: null }, T0 + 1);
    expect(await revokeToken(second, T0 + 2)).toBe(true);
    expect(await revokeToken(second, T0 + 3)).toBe(false);
    const tokens = (await tableRows(store, "IngestToken")).map(({ id, ...row }): Record<string, unknown> => ({ ...row, second: id === second })).sort((a, b) => (a.createdAt as number) - (b.createdAt as number));
    expect(tokens).toEqual([
      { sourceId: source.id, tokenHash: "hash-1", prefix: "rr_1", label: "first", createdAt: T0, revokedAt: null, second: false },
      { sourceId: source.id, tokenHash: "hash-2", prefix: "rr_2", label: null, createdAt: T0 + 1, revokedAt: T0 + 2, second: true },
    ]);

    await updateSourceSettings(source.id, { policy: "{\"maxAttempts\":3}", capacityRecovery: true });
    await updateSourceSettings(source.id, { resumeAtReset: true, incidents: { incidentMinThreads: 4, incidentWindowMs: 60_000 } });
    await updateSourceSettings(source.id, {});
    await recordPoll(source.id, "interrupt,continue", T0 + 10);
    await recordPoll(source.id, undefined, T0 + 20);
    await recordPoll(source.id, undefined, T0 + 5); // an older poll arriving late moves nothing back
    const [row] = await tableRows(store, "Source");
    expect(row).toMatchObject({
      name: "laptop", createdAt: T0, policy: "{\"maxAttempts\":3}", capacityRecovery: 1, resumeAtReset: 1,
      incidentMinThreads: 4, incidentWindowMs: 60_000, capabilities: "interrupt,continue", lastPolledAt: T0 + 20,
    });
  });

  it("hands the watchdog the threads whose wake time has come, earliest first, and the next wake time", async () => {
    const { id: sourceId } = await createSource("watched", { ...TOKEN, tokenHash: "hash-w" }, T0);
    expect(await dueThreadIds(T0)).toEqual([]);
    const late = await insertThread(store, sourceId, "late", T0 + 300);
    const early = await insertThread(store, sourceId, "early", T0 + 100);
    await insertThread(store, sourceId, "asleep", null);
    expect(await nextWakeAt()).toBe(T0 + 100);
    expect(await dueThreadIds(T0 + 99)).toEqual([]);
    expect(await dueThreadIds(T0 + 300)).toEqual([early, late]);
    expect(await dueThreadIds(T0 + 300, 1)).toEqual([early]);
  });

  it("delivers pending directives oldest first, and again only when unanswered past the delay", async () => {
    const { id: sourceId } = await createSource("relay", { ...TOKEN, tokenHash: "hash-d" }, T0);
    const thread = await insertThread(store, sourceId, "thread-d", null);
    await insertDirective(store, "d2", sourceId, thread, T0 + 2);
    await insertDirective(store, "d1", sourceId, thread, T0 + 1);
    const first = await takePendingDirectives(sourceId, T0 + 10, 1_000);
    expect(first.map((d) => [d.id, d.threadId, d.kind, d.createdAt])).toEqual([
      ["d1", "thread-d", "interrupt", new Date(T0 + 1).toISOString()],
      ["d2", "thread-d", "interrupt", new Date(T0 + 2).toISOString()],
    ]);
    expect(await takePendingDirectives(sourceId, T0 + 500, 1_000)).toEqual([]);
    expect((await takePendingDirectives(sourceId, T0 + 1_010, 1_000)).map((d) => d.id)).toEqual(["d1", "d2"]);
    const rows = await tableRows(store, "Directive");
    expect(rows.map((row) => [row.state, row.deliveredAt])).toEqual([["delivered", T0 + 1_010], ["delivered", T0 + 1_010]]);
  });

  it("counts new events into their sources' usage in bounded steps, each once", async () => {
    const { id: sourceId } = await createSource("counted", { ...TOKEN, tokenHash: "hash-c" }, T0);
    expect(await countNewEvents(10)).toBe(false);
    for (const key of ["a", "b", "c"]) await insertEvent(store, sourceId, key, "raw-" + key);
    expect(await countNewEvents(2)).toBe(true);
    expect(await countNewEvents(2)).toBe(false);
    expect(await countNewEvents(2)).toBe(false);
    const [usage] = await tableRows(store, "SourceUsage");
    expect({ ...usage, bytes: Number(usage.bytes) }).toEqual({ sourceId, events: 3, bytes: 3 * ("raw-a".length + "{}".length) });
  });

  it("keeps alert destinations and rules, queues a test alert, deletes a destination with its rules and failing its waiting alerts, prunes finished alerts", async () => {
    const destination = await createAlertDestination({ name: "ops", url: "https://hooks.example/1", format: "slack", secret: "s3cret", createdBy: "ada" }, T0);
    const rule = await createAlertRule({ destinationId: destination, event: "limit.above", threshold: 90, createdBy: "ada" }, T0 + 1);
    expect((await tableRows(store, "AlertDestination")).map(({ id: _, ...row }) => row)).toEqual([
      { name: "ops", url: "https://hooks.example/1", format: "slack", secret: "s3cret", createdAt: T0, createdBy: "ada" },
    ]);
    expect((await tableRows(store, "AlertRule")).map(({ id, ...row }) => ({ ...row, rule: id === rule }))).toEqual([
      { destinationId: destination, event: "limit.above", threshold: 90, createdAt: T0 + 1, createdBy: "ada", rule: true },
    ]);
    expect(await deleteAlertRule(rule)).toBe(true);
    expect(await deleteAlertRule(rule)).toBe(false);

    const alert = { key: "test-1", event: "test", subject: "ops", text: "a test" } as never;
    const queued = await enqueueTestAlert(destination, alert, T0 + 2);
    const [row] = await tableRows(store, "AlertOutbox");
    expect(row).toMatchObject({ id: queued, dedupeKey: "test-1", ruleId: null, destinationId: destination, event: "test", state: "pending", attempts: 0, createdAt: T0 + 2, nextAttemptAt: T0 + 2 });
    expect(JSON.parse(row.alert as string)).toEqual({ event: "test", subject: "ops", text: "a test" });

    expect(await deleteAlertDestination("dst-unknown", T0 + 3)).toBeNull();
    expect(await deleteAlertDestination(destination, T0 + 3)).toBe("ops");
    expect(await tableRows(store, "AlertDestination")).toEqual([]);
    expect(await tableRows(store, "AlertOutbox")).toEqual([expect.objectContaining({ id: queued, state: "failed", lastError: "destination deleted", lastAttemptAt: T0 + 3 })]);

    expect(await pruneAlerts(T0 + 2, 10)).toBe(0);
    expect(await pruneAlerts(T0 + 3, 10)).toBe(1);
    expect(await tableRows(store, "AlertOutbox")).toEqual([]);
  });

  it("silences an open incident's alerts, lifts it, and knows no silence for an unknown or forming one", async () => {
    for (const [id, state] of [["inc-open", "open"], ["inc-forming", "forming"]]) {
      await exec(
        store,
        `INSERT INTO "Incident" (id, state, kind, startedAt, lastNoticeAt, notices, threadCount, threads) VALUES (?, ?, 'rate_limit', ?, ?, 3, 3, '[]')`,
        (ms) => `INSERT INTO "Incident" (id, state, kind, "startedAt", "lastNoticeAt", notices, "threadCount", threads) VALUES ($1, $2, 'rate_limit', ${ms("$3")}, ${ms("$4")}, 3, 3, '[]')`,
        [id, state, T0, T0],
      );
    }
    expect(await silenceIncident("inc-open", 30, T0)).toEqual({ until: T0 + 30 * 60_000 });
    expect((await tableRows(store, "Incident")).find((i) => i.id === "inc-open")?.silencedUntil).toBe(T0 + 30 * 60_000);
    expect(await silenceIncident("inc-open", 0, T0)).toEqual({ until: null });
    expect(await silenceIncident("inc-forming", 30, T0)).toBeNull();
    expect(await silenceIncident("inc-unknown", 30, T0)).toBeNull();

    expect(await acknowledgeIncident("inc-open", "ada", T0 + 1)).toBe(true);
    expect(await acknowledgeIncident("inc-forming", "ada", T0 + 1)).toBe(false);
    expect((await tableRows(store, "Incident")).find((i) => i.id === "inc-open")).toMatchObject({ acknowledgedBy: "ada", acknowledgedAt: T0 + 1 });
    expect(await annotateIncident("inc-open", "bob", "failing over", T0 + 2)).toBe(true);
    expect(await annotateIncident("inc-forming", "bob", "not yet", T0 + 2)).toBe(false);
    expect(await annotateIncident("inc-unknown", "bob", "no", T0 + 2)).toBe(false);
    expect((await tableRows(store, "IncidentNote")).map(({ id: _, ...row }) => row)).toEqual([{ incidentId: "inc-open", at: T0 + 2, actor: "bob", text: "failing over" }]);
  });

  it("prunes counted events older than the cutoff, keeping those of a thread not quiet since, in steps, and takes them out of their source's usage", async () => {
    // Before every other case's events (this database is shared by the cases).
    const B = T0 - 100_000;
    const { id: sourceId } = await createSource("pruned", { ...TOKEN, tokenHash: "hash-p" }, T0);
    const quiet = await insertThread(store, sourceId, "quiet", null);
    const busy = await insertThread(store, sourceId, "busy", null);
    const touch = (id: number, at: number) => exec(store, `UPDATE "Thread" SET updatedAt = ? WHERE id = ?`, (ms) => `UPDATE "Thread" SET "updatedAt" = ${ms("$1")} WHERE id = $2`, [at, id]);
    await touch(quiet, B + 5);
    await touch(busy, B + 10_000);
    await insertEvent(store, sourceId, "old-quiet-1", "r", B, quiet);
    await insertEvent(store, sourceId, "old-quiet-2", "r", B + 1, quiet);
    await insertEvent(store, sourceId, "old-busy", "r", B + 2, busy);
    await insertEvent(store, sourceId, "old-none", "r", B + 3, null);
    await insertEvent(store, sourceId, "new-quiet", "r", B + 6_000, quiet);
    await countNewEvents(100);
    await insertEvent(store, sourceId, "old-uncounted", "r", B + 4, null);

    const steps = [];
    let after: typeof PRUNE_START | null = PRUNE_START;
    while (after) {
      const step = await pruneEvents(B + 5_000, after, 2);
      steps.push(step.pruned);
      after = step.after;
    }
    expect(steps).toEqual([2, 1, 0]);
    const left = (await tableRows(store, "Event")).filter((row) => row.sourceId === sourceId).map((row) => row.idempotencyKey).sort();
    expect(left).toEqual(["new-quiet", "old-busy", "old-uncounted"]);
    const usage = (await tableRows(store, "SourceUsage")).find((row) => row.sourceId === sourceId)!;
    expect({ events: usage.events, bytes: Number(usage.bytes) }).toEqual({ events: 2, bytes: 2 * ("r".length + "{}".length) });
  });

  it("prunes limit snapshots observed before the cutoff, oldest first, at most so many", async () => {
    const { id: sourceId } = await createSource("limited", { ...TOKEN, tokenHash: "hash-l" }, T0);
    for (const at of [T0 + 3, T0 + 1, T0 + 2, T0 + 10]) {
      await exec(
        store,
        `INSERT INTO "LimitSnapshot" (sourceId, provider, window, status, observedAt) VALUES (?, 'openai', 'primary', 'ok', ?)`,
        (ms) => `INSERT INTO "LimitSnapshot" ("sourceId", provider, "window", status, "observedAt") VALUES ($1, 'openai', 'primary', 'ok', ${ms("$2")})`,
        [sourceId, at],
      );
    }
    expect(await pruneLimitSnapshots(T0 + 5, 2)).toBe(2);
    expect((await tableRows(store, "LimitSnapshot")).map((row) => row.observedAt).sort()).toEqual([T0 + 3, T0 + 10]);
    expect(await pruneLimitSnapshots(T0 + 5, 2)).toBe(1);
    expect(await pruneLimitSnapshots(T0 + 5, 2)).toBe(0);
  });

  it.runIf(store === "postgres")("(last: it leaves the ids far on) counts events whose ids are beyond 32 bits into usage (event ids are 64-bit on both stores)", async () => {
    const { id: sourceId } = await createSource("far", { ...TOKEN, tokenHash: "hash-far" }, T0);
    while (await countNewEvents(1_000));
    await exec(store, "", () => `SELECT setval('"Event_id_seq"', 3000000000)`, []);
    for (const key of ["far-a", "far-b"]) await insertEvent(store, sourceId, key, "raw-" + key);
    // Counting steps through ids: one step wide enough to cross the jump counts both.
    expect(await countNewEvents(4_000_000_000)).toBe(false);
    const usage = (await tableRows(store, "SourceUsage")).find((row) => row.sourceId === sourceId);
    expect(Number(usage?.events)).toBe(2);
  });
});
