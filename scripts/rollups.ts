// `npm run rollups -- rebuild`: recomputes the rollups from the stored events, episodes and
// attempts (after an import of raw rows, or to check them), in one unit of work.
import { closeDatabase } from "../lib/db/client";
import { closePool } from "../lib/db/postgres/pool";
import { rebuildAllRollups } from "../lib/db/rollups";

const [command] = process.argv.slice(2);
if (command !== "rebuild") {
  console.error("usage: npm run rollups -- rebuild");
  process.exit(2);
}
const started = performance.now();
const result = await rebuildAllRollups();
console.log(`rollups rebuilt: ${result.rollups} minute rows, ${result.hours} hour rows, ${result.totals} metric totals in ${Math.round(performance.now() - started)} ms`);
await Promise.all([closeDatabase(), closePool()]);
