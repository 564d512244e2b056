// `npm run rollups -- rebuild`: recomputes the rollups from the stored events, episodes and
// attempts (after an import of raw rows, or to check them), in one unit of work.
import { db } from "../lib/db/client";
import { transaction } from "../lib/db/unit-of-work";
import { rebuildRollups } from "../lib/db/rollups";

const [command] = process.argv.slice(2);
if (command !== "rebuild") {
  console.error("usage: npm run rollups -- rebuild");
  process.exit(2);
}
const started = performance.now();
const { sql } = db();
const result = await transaction(async () => rebuildRollups(sql));
console.log(`rollups rebuilt: ${result.rollups} minute rows, ${result.hours} hour rows, ${result.totals} metric totals in ${Math.round(performance.now() - started)} ms`);
await db().prisma.$disconnect();
