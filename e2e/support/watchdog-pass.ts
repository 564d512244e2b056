import { dueThreadIds } from "@/lib/db/thread-state";
import { closePool } from "@/lib/db/postgres/pool";
import { closeQuietIncidents, tickThreads } from "@/lib/server/pipeline";

/**
 * One watchdog pass in a process of its own, as a leader would run it (lib/server/watchdog.ts),
 * for lib/server/watchdog.pg.test.ts: `tsx watchdog-pass.ts <now>` with DATABASE_URL set; prints
 * the keys of the threads it changed as JSON.
 */
const now = Number(process.argv[2]);
const due = await dueThreadIds(now, 200);
const changed = due.length ? await tickThreads(due, now) : [];
await closeQuietIncidents(now);
process.stdout.write(`${JSON.stringify({ due, changed })}\n`);
await closePool();
