import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { PATIENCE_MS } from "@/e2e/support/patience";
import { freshDatabase } from "@/scripts/lib/postgres";
import { postgresClients } from "@/e2e/support/postgres-clients";
import { waitFor } from "@/e2e/support/relay-helpers";
import { contendForLeadership, type Leadership } from "./leader";

/** Leadership on a real cluster: contenders on their own connections, one in a child process. */
const KEY = 42;
const contenders: Leadership[] = [];
const children: ChildProcess[] = [];
const { connect, end } = postgresClients();

afterEach(async () => {
  await Promise.all(contenders.splice(0).map((contender) => contender.stop()));
  for (const child of children.splice(0)) child.kill("SIGKILL");
});
afterAll(async () => {
  await end();
});

/** Contenders in this process; `leaders` is who believes it leads, and no two ever do at once. */
function contenders3(url: string, intervalMs: number) {
  const leaders = new Set<number>();
  const violations: string[] = [];
  const started = [0, 1, 2].map((n) =>
    contendForLeadership(url, {
      key: KEY,
      intervalMs,
      onLeader: () => {
        if (leaders.size) violations.push(`${n} became leader while ${[...leaders]} led`);
        leaders.add(n);
      },
      onStepDown: () => leaders.delete(n),
    }),
  );
  contenders.push(...started);
  return { contenders: started, leaders, violations };
}

/** Holders of advisory locks in the database (the server's own view of leadership). */
async function lockHolders(admin: pg.Client): Promise<number> {
  const { rows } = await admin.query(
    `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
     WHERE l.locktype = 'advisory' AND l.granted AND d.datname = current_database()`,
  );
  return rows[0].n;
}

async function connected(admin: pg.Client): Promise<number> {
  const { rows } = await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'radar-leader' AND datname = current_database()`);
  return rows[0].n;
}

describe("one leader among instances (advisory lock with a lease)", () => {
  it("three contenders: exactly one leads, and leadership passes along as leaders stop", async () => {
    const url = await freshDatabase(inject("postgresUrl"));
    const admin = await connect(url);
    const { contenders: all, leaders, violations } = contenders3(url, 50);
    // Every contender connected and tried the lock at least once.
    await waitFor(async () => leaders.size === 1 && (await connected(admin)) === 3, PATIENCE_MS, () => `leaders: ${[...leaders]}`);
    for (let round = 0; round < 2; round++) {
      expect(await lockHolders(admin)).toBe(1);
      const [leader] = leaders;
      await all[leader].stop();
      expect(all[leader].isLeader()).toBe(false);
      await waitFor(() => leaders.size === 1 && !leaders.has(leader), PATIENCE_MS, () => `leaders: ${[...leaders]}`);
    }
    expect(await lockHolders(admin)).toBe(1);
    expect(all.filter((contender) => contender.isLeader())).toHaveLength(1);
    expect(violations).toEqual([]);
  });

  it("firstAttempt settles after the first try: won (onLeader already called) or lost to a leader", async () => {
    const url = await freshDatabase(inject("postgresUrl"));
    const calls: string[] = [];
    // Tries again only once a minute: only the first try can settle firstAttempt in time.
    const first = contendForLeadership(url, { key: KEY, intervalMs: 60_000, onLeader: () => calls.push("first leads"), onStepDown: () => undefined });
    contenders.push(first);
    await first.firstAttempt;
    expect(calls).toEqual(["first leads"]);
    expect(first.isLeader()).toBe(true);
    const second = contendForLeadership(url, { key: KEY, intervalMs: 60_000, onLeader: () => calls.push("second leads"), onStepDown: () => undefined });
    contenders.push(second);
    await second.firstAttempt;
    expect(second.isLeader()).toBe(false);
    expect(calls).toEqual(["first leads"]);
  });

  it("firstAttempt settles when the first try fails (it is retried as ever)", async () => {
    const errors: string[] = [];
    const unreachable = contendForLeadership("postgres://radar@127.0.0.1:1/none", { key: KEY, intervalMs: 60_000, onLeader: () => undefined, onStepDown: () => undefined, onError: (error) => errors.push(error.message) });
    contenders.push(unreachable);
    await unreachable.firstAttempt;
    expect(unreachable.isLeader()).toBe(false);
    expect(errors).toHaveLength(1);
  });

  it("a leader that stops cleanly hands over at once, without waiting for the standbys' next try", async () => {
    const url = await freshDatabase(inject("postgresUrl"));
    const admin = await connect(url);
    // Standbys retry only once a minute here: the handover must come from the leader's word.
    const { contenders: all, leaders, violations } = contenders3(url, 60_000);
    await waitFor(async () => leaders.size === 1 && (await connected(admin)) === 3, PATIENCE_MS);
    const [leader] = leaders;
    const stopped = Date.now();
    await all[leader].stop();
    await waitFor(() => leaders.size === 1, PATIENCE_MS, () => `leaders: ${[...leaders]}`, 10);
    expect(Date.now() - stopped).toBeLessThan(60_000);
    expect(violations).toEqual([]);
  });

  it("a leader killed with SIGKILL in its own process: one of the others takes over", async () => {
    const url = await freshDatabase(inject("postgresUrl"));
    const admin = await connect(url);
    // Node itself with tsx's loader (not the tsx wrapper, whose node child would outlive SIGKILL).
    const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "leader-contender.ts"), url, String(KEY), "100"], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let out = "";
    let err = "";
    child.stdout!.on("data", (chunk) => (out += chunk));
    child.stderr!.on("data", (chunk) => (err += chunk));
    await waitFor(() => out.includes("leader\n"), PATIENCE_MS, () => `child stdout: ${out}\nstderr: ${err}`);

    const { contenders: all, leaders, violations } = contenders3(url, 100);
    // Both in-process contenders connected and found the lock taken.
    await waitFor(async () => (await connected(admin)) === 4, PATIENCE_MS);
    expect(leaders.size).toBe(0);
    expect(await lockHolders(admin)).toBe(1);

    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    await waitFor(() => leaders.size === 1, PATIENCE_MS, () => `leaders: ${[...leaders]}`);
    expect(all.filter((contender) => contender.isLeader())).toHaveLength(1);
    expect(await lockHolders(admin)).toBe(1);
    expect(violations).toEqual([]);
  });
});
