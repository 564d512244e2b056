import { contendForLeadership } from "./leader";

/**
 * A contender in a process of its own, for leader.pg.test.ts (killed with SIGKILL there):
 * `tsx leader-contender.ts <url> <key> <intervalMs>` prints "leader" when it becomes leader.
 */
const [url, key, intervalMs] = process.argv.slice(2);
contendForLeadership(url, {
  key: Number(key),
  intervalMs: Number(intervalMs),
  onLeader: () => process.stdout.write("leader\n"),
  onStepDown: () => process.stdout.write("standby\n"),
});
// Keeps the process alive: the contender's timers do not.
setInterval(() => undefined, 60_000);
