import { spawn } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useStore } from "@/e2e/support/both-stores";
import { normalizedLines } from "@/e2e/support/in-process";
import { PATIENCE_MS } from "@/e2e/support/patience";
import { waitFor } from "@/e2e/support/relay-helpers";
import type { NormalizedEvent, NormalizedLine } from "@/lib/ingest/types";

/**
 * The watchdog's pass when leadership changes hands on PostgreSQL (lib/server/watchdog.ts): a
 * leader that lost its connection may still run a pass while the next leader runs its first. Two
 * passes over one due thread, each in a process of its own and on its own connections, run at the
 * same moment (a third connection holds the thread's row until both wait for it): the deadline
 * ends one episode and sends one interrupt, and the second pass changes nothing.
 */
useStore("postgres");
process.env.RADAR_STOP_GRACE_MS = "60000";

const PASS = path.join(import.meta.dirname, "..", "..", "e2e", "support", "watchdog-pass.ts");
const T0 = Date.now() - 60_000;
const lines = (events: Partial<NormalizedEvent>[]): NormalizedLine[] => normalizedLines(events, { receivedAt: T0, base: { at: T0, threadId: "t" } });

/** `admin` holds the thread's row; `observer` watches (outside that transaction, whose view of activity is frozen). */
let admin: pg.Client;
let observer: pg.Client;
beforeAll(async () => {
  admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  observer = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await Promise.all([admin.connect(), observer.connect()]);
});
afterAll(async () => {
  await Promise.all([admin.end(), observer.end()]);
});

const logs: (() => string)[] = [];

/** Runs one pass in its own process; resolves with what it printed once it exits. */
function pass(now: number): Promise<{ due: number[]; changed: number[] }> {
  const child = spawn(process.execPath, ["--import", "tsx", PASS, String(now)], {
    env: { ...process.env, RADAR_STOP_GRACE_MS: "60000" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk) => (out += chunk));
  child.stderr!.on("data", (chunk) => (err += chunk));
  logs.push(() => `pass at ${now}: ${out} ${err}`);
  return new Promise((resolve, reject) =>
    child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out.trim().split("\n").at(-1)!)) : reject(new Error(`pass exited ${code}: ${err}`)))),
  );
}

/** Connections of this database waiting for a lock (the passes, held back by the row lock). */
async function waitingForLocks(): Promise<number> {
  const { rows } = await observer.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return rows[0].n;
}

describe("a watchdog pass run twice at once (a change of leader mid-pass)", () => {
  it("ends one episode and sends one interrupt", async () => {
    const { createSource } = await import("./tokens");
    const { ingestLines } = await import("./pipeline");
    const source = await createSource("twice", `rr_twice_${Date.now()}`);
    await ingestLines(
      source,
      lines([
        { threadId: "countdown", type: "turn.started", turnId: "u1", at: T0 },
        { threadId: "countdown", type: "retry", turnId: "u1", at: T0, attempt: 1, error: { httpStatus: 429 } },
      ]),
      T0,
    );
    const { rows } = await admin.query<{ id: number }>(`SELECT id FROM "Thread" WHERE "sourceId" = $1 AND "externalId" = 'countdown'`, [source.id]);
    const id = rows[0].id;
    // Past the deadline (notice + 65 s), inside the stop grace.
    const later = T0 + 100_000;

    await admin.query("BEGIN");
    await admin.query(`SELECT id FROM "Thread" WHERE id = $1 FOR UPDATE`, [id]);
    const passes = [pass(later), pass(later + 5)];
    const settled: string[] = [];
    for (const running of passes) running.then((result) => settled.push(JSON.stringify(result)), (error: Error) => settled.push(error.message));
    await waitFor(
      async () => {
        if (settled.length) throw new Error(`a pass ended while the thread was locked: ${settled.join("; ")}`);
        return (await waitingForLocks()) === 2;
      },
      PATIENCE_MS,
      async () => `waiting for locks: ${await waitingForLocks()}; ${logs.map((log) => log()).join("; ")}`,
    );
    await admin.query("COMMIT");
    const results = await Promise.all(passes);

    expect(results.map((result) => result.due)).toEqual([[id], [id]]);
    expect(results.map((result) => result.changed).sort((a, b) => a.length - b.length)).toEqual([[], [id]]);
    const thread = await admin.query<{ status: string }>(`SELECT status FROM "Thread" WHERE id = $1`, [id]);
    expect(thread.rows[0].status).toBe("exhausted");
    const episodes = await admin.query<{ outcome: string | null }>(`SELECT outcome FROM "Episode" WHERE "threadId" = $1 ORDER BY seq`, [id]);
    expect(episodes.rows).toEqual([{ outcome: "exhausted" }]);
    const directives = await admin.query(`SELECT kind, state, origin FROM "Directive" WHERE "threadId" = $1`, [id]);
    expect(directives.rows).toEqual([{ kind: "interrupt", state: "pending", origin: "policy" }]);
    // The exhausted episode is counted once in the rollups too.
    const { rows: counted } = await admin.query<{ n: number }>(
      `SELECT coalesce(sum(n), 0)::int AS n FROM "Rollup" WHERE fact = 'outcome' AND label = 'exhausted'`,
    );
    expect(counted[0].n).toBe(1);
  });
});
