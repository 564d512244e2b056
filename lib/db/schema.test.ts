import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandles } from "./client";
import { DatabaseConfigError, postgresAddress, postgresProblem, resolveDatabasePath } from "./config";
import { migrate } from "./migrate";

/**
 * The committed SQL migrations and prisma/schema.prisma must describe the same database: every
 * model is written and read back through Prisma against a freshly migrated file.
 */
let dir: string;
let handles: DatabaseHandles;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-schema-"));
  handles = openDatabase(path.join(dir, "radar.db"));
});
afterAll(async () => {
  await handles.prisma.$disconnect();
  handles.sql.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("the migrated database and schema.prisma agree", () => {
  it("writes and reads every model through Prisma", async () => {
    const { prisma } = handles;
    const at = new Date("2026-11-29T17:00:00.000Z");
    const source = await prisma.source.create({ data: { id: "s1", name: "codex@build-7", createdAt: at, lastSeenAt: at, policy: "recipe-runner", capacityRecovery: true } });
    await prisma.ingestToken.create({ data: { id: "k1", sourceId: source.id, tokenHash: "h".repeat(64), prefix: "rr_abcd", label: "ci", createdAt: at, revokedAt: at } });
    const thread = await prisma.thread.create({
      data: {
        sourceId: source.id, externalId: "th-1", parentExternalId: "th-0", title: "t", agent: "codex", provider: "openai", model: "gpt-5.5",
        policy: "codex-429-stall-bound", status: "retrying", turnId: "u1", retryKind: "rate_limit", retryAttempt: 1, retryMaxAttempts: 5,
        nextAttemptAt: at, nextAttemptEstimated: true, deadlineAt: at, resetAt: at, advisedDelayMs: 2000, lastErrorKind: "rate_limit",
        lastErrorHttpStatus: 429, lastErrorCode: "rate_limit_exceeded", lastErrorMessage: "slow down", wakeAt: at, state: "{}", lastEventAt: at,
        openProgressEventId: 3, createdAt: at, updatedAt: at,
      },
    });
    await prisma.turn.create({ data: { threadId: thread.id, externalId: "u1", status: "running", startedAt: at, endedAt: at } });
    const episode = await prisma.episode.create({
      data: { threadId: thread.id, seq: 1, turnId: "u1", kind: "rate_limit", policy: null, maxAttempts: 5, startedAt: at, endedAt: at, outcome: "exhausted", outcomeCode: "rateLimitRetryExhausted", outcomeReason: "stalled", resetAt: at },
    });
    await prisma.attempt.create({
      data: { episodeId: episode.id, n: 1, noticeAt: at, advisedDelayMs: 2000, expectedAt: at, estimated: true, deadlineAt: at, startedAt: at, earlyByMs: 1770, httpStatus: 429, code: "x", message: "m" },
    });
    const event = await prisma.event.create({
      data: {
        sourceId: source.id, threadId: thread.id, idempotencyKey: "e1", format: "canonical", nativeType: null, type: "retry", at, receivedAt: at, lastAt: at,
        count: 3, turnId: "u1", attempt: 1, maxAttempts: 5, delayMs: 2000, kind: "rate_limit", httpStatus: 429, code: "c", message: "m", late: true, raw: "{}", normalized: "{}",
      },
    });
    await prisma.ingestKey.create({ data: { sourceId: source.id, key: "e1", eventId: event.id } });
    await prisma.directive.create({
      data: { id: "d1", sourceId: source.id, threadId: thread.id, dedupeKey: "th-1:u1:ep1:interrupt", turnId: "u1", kind: "interrupt", origin: "policy", reason: "r", state: "acknowledged", createdAt: at, deliveredAt: at, acknowledgedAt: at, result: "acknowledged", detail: "ok" },
    });
    await prisma.auditEntry.create({ data: { at, actor: "op", action: "stop", target: "th-1", reason: "why", result: "stopping", detail: "d" } });

    const read = await prisma.thread.findUniqueOrThrow({
      where: { sourceId_externalId: { sourceId: "s1", externalId: "th-1" } },
      include: { source: { include: { tokens: true } }, turns: true, episodes: { include: { attempts: true } }, events: true, directives: true },
    });
    expect(read).toMatchObject({ nextAttemptEstimated: true, deadlineAt: at, retryAttempt: 1, source: { capacityRecovery: true, tokens: [{ revokedAt: at }] } });
    expect(read.episodes[0].attempts[0]).toMatchObject({ earlyByMs: 1770, estimated: true, startedAt: at });
    expect(read.events[0]).toMatchObject({ late: true, count: 3, at });
    expect(read.turns[0].endedAt).toEqual(at);
    expect(read.directives[0].acknowledgedAt).toEqual(at);
    expect(await prisma.ingestKey.count()).toBe(1);
    const labels = { kind: "rate_limit", provider: "openai", model: "gpt-5.5", agent: "codex", label: "4" };
    await prisma.rollup.create({ data: { fact: "advised", minute: at, sourceId: source.id, ...labels, n: 1, ms: 2000n, waited: 1, judged: 1, early: 1, earlyMs: 1770n } });
    await prisma.metricTotal.create({ data: { fact: "advised", ...labels, n: 1, ms: 2000n, waited: 1, judged: 1, early: 1, earlyMs: 1770n } });
    expect(await prisma.rollup.findFirstOrThrow({ where: { fact: "advised" } })).toMatchObject({ minute: at, ms: 2000n, earlyMs: 1770n });
    expect(await prisma.metricTotal.findFirstOrThrow({ where: { fact: "advised" } })).toMatchObject({ n: 1, ms: 2000n });
    await prisma.threadWaitTotal.create({ data: { threadId: 1, ms: 2000n } });
    expect(await prisma.threadWaitTotal.findUniqueOrThrow({ where: { threadId: 1 } })).toMatchObject({ ms: 2000n });
    expect((await prisma.auditEntry.findFirstOrThrow()).at).toEqual(at);
    const window = { sourceId: source.id, account: "team", provider: "anthropic", window: "five_hour", usedPercent: 92.5, windowMinutes: 300, resetAt: at, status: "warning", observedAt: at, threadId: "th-1", reachedType: "rate_limit_reached" };
    await prisma.limitSnapshot.create({ data: window });
    await prisma.limitWindow.create({ data: window });
    expect(await prisma.limitSnapshot.findFirstOrThrow()).toMatchObject(window);
    expect(await prisma.limitWindow.findFirstOrThrow()).toMatchObject(window);
    const incident = { id: "inc-1", state: "open", kind: "rate_limit", provider: "openai", model: "gpt-5.5", sourceId: null, startedAt: at, lastNoticeAt: at, endedAt: at, closedBy: "quiet", notices: 4, resetAt: at, threadCount: 3, threads: "[]", acknowledgedBy: "op", acknowledgedAt: at };
    await prisma.incident.create({ data: incident });
    expect(await prisma.incident.findFirstOrThrow()).toMatchObject(incident);
    const note = { incidentId: "inc-1", at, actor: "op", text: "failing over to gpt-5.4" };
    await prisma.incidentNote.create({ data: note });
    expect(await prisma.incidentNote.findFirstOrThrow()).toMatchObject(note);
    // Times are epoch milliseconds on disk, which the hot path writes directly.
    expect(handles.sql.prepare(`SELECT at FROM "Event"`).pluck().get()).toBe(at.getTime());
  });

  it("enforces one idempotency key per source", async () => {
    const at = new Date();
    await expect(
      handles.prisma.event.create({ data: { sourceId: "s1", idempotencyKey: "e1", format: "canonical", type: "progress", at, receivedAt: at, raw: "{}", normalized: "{}" } }),
    ).rejects.toThrow();
  });

  it("runs in WAL mode with synchronous set explicitly", () => {
    expect(handles.sql.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(handles.sql.pragma("synchronous", { simple: true })).toBe(1);
  });
});

describe("migrations", () => {
  it("apply once, are recorded, and re-running them changes nothing", () => {
    const db = new Database(path.join(dir, "again.db"));
    const first = migrate(db);
    const second = migrate(db);
    expect(first.applied.length).toBe(first.total);
    expect(second.applied).toEqual([]);
    expect(db.prepare(`SELECT count(*) FROM "_radar_migrations"`).pluck().get()).toBe(first.total);
    db.close();
  });

  it("refuse a migration edited after it was applied", () => {
    const migrations = path.join(dir, "migrations");
    fs.mkdirSync(path.join(migrations, "0001_a"), { recursive: true });
    fs.writeFileSync(path.join(migrations, "0001_a", "migration.sql"), `CREATE TABLE "A" (x INTEGER);`);
    const db = new Database(":memory:");
    migrate(db, migrations);
    fs.writeFileSync(path.join(migrations, "0001_a", "migration.sql"), `CREATE TABLE "A" (x INTEGER, y INTEGER);`);
    expect(() => migrate(db, migrations)).toThrow(/0001_a was edited after it was applied/);
  });

  it("roll back a migration that fails half way, leaving it unrecorded", () => {
    const migrations = path.join(dir, "broken");
    fs.mkdirSync(path.join(migrations, "0001_b"), { recursive: true });
    fs.writeFileSync(path.join(migrations, "0001_b", "migration.sql"), `CREATE TABLE "B" (x INTEGER); CREATE TABLE "B" (x INTEGER);`);
    const db = new Database(":memory:");
    expect(() => migrate(db, migrations)).toThrow(/already exists/);
    expect(db.prepare(`SELECT count(*) FROM sqlite_master WHERE name = 'B'`).pluck().get()).toBe(0);
    expect(db.prepare(`SELECT count(*) FROM "_radar_migrations"`).pluck().get()).toBe(0);
  });
});

describe("DATABASE_URL is checked before anything opens it", () => {
  it.each([
    ["postgres://localhost/radar", /names the PostgreSQL database localhost:5432\/radar, not a SQLite file/],
    ["file:", /names no file/],
    ["file:./data/", /names no file/],
  ])("%s is refused with a clear message", (url, message) => {
    expect(() => resolveDatabasePath(url, dir)).toThrow(DatabaseConfigError);
    expect(() => resolveDatabasePath(url, dir)).toThrow(message);
  });

  it("a PostgreSQL database that cannot be opened is named host:port/database with the reason, never with its password", () => {
    const url = "postgres://radar:s3cret@db.internal:6543/radar_prod";
    expect(postgresAddress(url)).toBe("db.internal:6543/radar_prod");
    expect(postgresAddress("postgresql://localhost")).toBe("localhost:5432/postgres");
    const cases: [unknown, RegExp][] = [
      [Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:6543"), { code: "ECONNREFUSED" }), /nothing accepts connections there/],
      [Object.assign(new Error("getaddrinfo ENOTFOUND db.internal"), { code: "ENOTFOUND" }), /host name is unknown/],
      [Object.assign(new Error("password authentication failed for user \"radar\""), { code: "28P01" }), /the password of radar was refused/],
      [Object.assign(new Error('database "radar_prod" does not exist'), { code: "3D000" }), /does not exist/],
      [new Error(`Connection terminated due to connection timeout ${url}\n    at Client.connect`), /connection timeout DATABASE_URL\.$/],
    ];
    for (const [error, reason] of cases) {
      const problem = postgresProblem(url, error);
      expect(problem).toBeInstanceOf(DatabaseConfigError);
      expect(problem.message).toMatch(/^cannot open the PostgreSQL database db\.internal:6543\/radar_prod: /);
      expect(problem.message).toMatch(reason);
      expect(problem.message).not.toContain("s3cret");
      expect(problem.message).not.toContain("\n");
    }
    expect(() => postgresAddress("postgres://radar:s3cret@[oops/radar")).toThrow(DatabaseConfigError);
    expect(() => postgresAddress("postgres://radar:s3cret@[oops/radar")).not.toThrow(/s3cret/);
  });

  it("an unwritable data folder is refused with a clear message", () => {
    // Root may write anywhere; a path under a regular file can never be created.
    fs.writeFileSync(path.join(dir, "not-a-folder"), "");
    expect(() => resolveDatabasePath("file:./not-a-folder/radar.db", dir)).toThrow(/Cannot create the data folder/);
  });

  it("a relative path resolves against the working directory and its folder is created", () => {
    expect(resolveDatabasePath("file:./nested/deeper/radar.db", dir)).toBe(path.join(dir, "nested", "deeper", "radar.db"));
    expect(fs.existsSync(path.join(dir, "nested", "deeper"))).toBe(true);
  });
});
