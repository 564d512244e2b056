// How long one watchdog pass holds the thread, in process on a fresh SQLite file:
// `npx tsx scripts/profile-watchdog.ts`. 200 threads retry at once (a Retry-After of 2 s); their
// deadlines are then ticked as one unit of work (the whole batch) and as the watchdog does it,
// TICK_CHUNK threads per unit of work, printing each unit's longest stretch.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { normalizeBatch } from "../lib/ingest/batch";

process.env.DATABASE_URL = `file:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), "radar-profile-watchdog-")), "radar.db")}`;
const pipeline = await import("../lib/server/pipeline");
const tokens = await import("../lib/server/tokens");
const { dueThreadIds } = await import("../lib/db/thread-state");
const { TICK_CHUNK } = await import("../lib/server/watchdog");

const THREADS = 200;
const source = await tokens.createSource("profile-watchdog", "rr_profile_watchdog_0123456789");

async function retryingThreads(prefix: string, t0: number): Promise<void> {
  for (let i = 0; i < THREADS; i++) {
    const base = { threadId: `${prefix}-${i}`, turnId: "turn-1", agent: "codex", provider: "openai", model: "gpt-5" };
    const retry = { ...base, type: "retry", at: t0 + 1, attempt: 1, maxAttempts: 5, error: { httpStatus: 429, code: "rate_limit_exceeded", message: "Please try again in 2s." } };
    // Through the canonical adapter, as a POST to /api/v1/events would be.
    const { lines } = normalizeBatch("canonical", [{ ...base, id: `${base.threadId}-start`, type: "turn.started", at: t0 }, { ...retry, id: `${base.threadId}-retry` }], { receivedAt: t0 });
    await pipeline.ingestLines(source, lines, t0);
  }
}

for (const round of [1, 2, 3]) {
  const t0 = Date.now() + round * 10_000_000;
  await retryingThreads(`whole-${round}`, t0);
  const now = t0 + 3_600_000;
  const due = await dueThreadIds(now, THREADS);
  let started = performance.now();
  await pipeline.tickThreads(due, now);
  const whole = performance.now() - started;
  await retryingThreads(`chunked-${round}`, t0 + 1);
  const chunked = await dueThreadIds(now + 1, THREADS);
  const units: number[] = [];
  for (let i = 0; i < chunked.length; i += TICK_CHUNK) {
    started = performance.now();
    await pipeline.tickThreads(chunked.slice(i, i + TICK_CHUNK), now + 1);
    units.push(performance.now() - started);
  }
  const sorted = units.toSorted((a, b) => a - b);
  console.log(
    `round ${round}: ${due.length} due threads in one unit of work ${whole.toFixed(1)} ms; ${chunked.length} in units of ${TICK_CHUNK}: ` +
      `median ${sorted[Math.floor(sorted.length / 2)].toFixed(1)} ms, the longest ${sorted.at(-1)!.toFixed(1)} ms (unit ${units.indexOf(sorted.at(-1)!) + 1} of ${units.length})`,
  );
}
