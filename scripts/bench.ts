// `npm run bench`: the speed and memory targets, measured on this machine in one run.
// Never part of `npm test` (timing is not a pass/fail matter for unit tests).
import { fail } from "./lib/cli";
import { prepare } from "./lib/prepare.mjs";
import { benchIngest, formatIngestBench } from "./bench-ingest";
import { benchInsights, formatInsightsBench } from "./bench-insights";
import { benchReducer } from "./bench-reducer";
import { benchBoard, benchBoardApi, formatBoardApiBench, formatBoardBench } from "./bench-board";
import { benchReads, formatReadsBench } from "./bench-reads";
import { benchKeys, formatKeysBench } from "./bench-keys";
import { benchOtlp, formatOtlpBench } from "./bench-otlp";

prepare();

// `npm run bench -- --store postgres`: the same targets on PostgreSQL (scripts/bench-postgres.ts).
const storeArg = process.argv.indexOf("--store");
const store = storeArg === -1 ? "sqlite" : process.argv[storeArg + 1];
if (store !== "sqlite" && store !== "postgres") fail("bench", `--store must be sqlite or postgres; got "${store ?? ""}"`);
if (store === "postgres") {
  const { benchPostgres } = await import("./bench-postgres");
  await benchPostgres();
  process.exit(0);
}

const reducer = await benchReducer();
console.log(
  `reducer: ${reducer.events.toLocaleString("en")} events over ${reducer.threads.toLocaleString("en")} threads in ${reducer.ms} ms = ` +
    `${reducer.eventsPerSecond.toLocaleString("en")} events/s (target well above 200,000)`,
);
console.log(formatIngestBench(await benchIngest()));
console.log(formatKeysBench(benchKeys()));
console.log(formatOtlpBench(await benchOtlp()));
console.log(formatInsightsBench(await benchInsights()));
console.log(formatBoardBench(await benchBoard()));
console.log(formatBoardApiBench(await benchBoardApi()));
console.log(formatReadsBench(await benchReads()));
console.log(`peak RSS of the bench process: ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB`);
