import fs from "node:fs";
import { fail } from "./lib/cli";

/**
 * Where a Chromium trace's renderer main thread spent its time: each event's self time (less the
 * events inside it), summed by name: `npx tsx scripts/trace-summary.ts <trace.json>`,
 * for the trace `RADAR_BENCH_TRACE=<file> npx tsx scripts/bench-board.ts` records of the board
 * under load. A CPU profile shows only JavaScript; this splits the rest into style, layout, paint.
 */
interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  args?: { name?: string };
}

const file = process.argv[2];
if (!file || !fs.existsSync(file)) fail("trace-summary", `give a trace file; got "${file ?? ""}"`);
const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as { traceEvents?: TraceEvent[] } | TraceEvent[];
const events = Array.isArray(parsed) ? parsed : (parsed.traceEvents ?? []);
// The busiest renderer main thread: a trace may hold several renderers (an extension's, a blank tab's).
const mains = events.filter((event) => event.ph === "M" && event.name === "thread_name" && event.args?.name === "CrRendererMain");
const eventsOn = new Map<string, number>();
for (const event of events) if (event.ph === "X") eventsOn.set(`${event.pid}:${event.tid}`, (eventsOn.get(`${event.pid}:${event.tid}`) ?? 0) + 1);
const main = mains.sort((a, b) => (eventsOn.get(`${b.pid}:${b.tid}`) ?? 0) - (eventsOn.get(`${a.pid}:${a.tid}`) ?? 0))[0];
if (!main) fail("trace-summary", "no renderer main thread (CrRendererMain) in the trace");
const complete = events
  .filter((event) => event.pid === main.pid && event.tid === main.tid && event.ph === "X" && event.dur !== undefined)
  .sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
// Self time: an event's duration less its children's (events nest on one thread).
const selfMs = new Map<TraceEvent, number>();
const stack: TraceEvent[] = [];
for (const event of complete) {
  while (stack.length && stack.at(-1)!.ts + stack.at(-1)!.dur! <= event.ts) stack.pop();
  const parent = stack.at(-1);
  if (parent) selfMs.set(parent, selfMs.get(parent)! - event.dur! / 1000);
  selfMs.set(event, event.dur! / 1000);
  stack.push(event);
}
const byName = new Map<string, { ms: number; count: number }>();
for (const [event, ms] of selfMs) {
  const entry = byName.get(event.name) ?? { ms: 0, count: 0 };
  entry.ms += ms;
  entry.count++;
  byName.set(event.name, entry);
}
const span = complete.length ? (complete.reduce((end, event) => Math.max(end, event.ts + event.dur!), 0) - complete[0].ts) / 1000 : 0;
const busy = [...byName.values()].reduce((sum, entry) => sum + entry.ms, 0);
console.log(`renderer main thread: ${busy.toFixed(0)} ms inside traced events over ${span.toFixed(0)} ms traced; self time by event:`);
for (const [name, entry] of [...byName].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25)) {
  console.log(`${entry.ms.toFixed(1).padStart(9)} ms ${String(entry.count).padStart(6)}×  ${name}`);
}
