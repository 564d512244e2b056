// Benchmarks only: preloaded into the server under test (NODE_OPTIONS=--import …) to measure how
// long its event loop stalls. It answers on its own loopback port, RADAR_BENCH_LOOP_PORT:
// GET /reset starts a window, GET / returns that window's stalls ({maxMs, p99Ms, meanMs}).
// Worker threads (the read worker, the page renderer: neither ingests) are not measured.
import http from "node:http";
import { isMainThread } from "node:worker_threads";
import fs from "node:fs";
import { monitorEventLoopDelay, performance, PerformanceObserver } from "node:perf_hooks";

const port = Number(process.env.RADAR_BENCH_LOOP_PORT);
if (isMainThread && port) {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const ms = (ns) => +(ns / 1e6).toFixed(1);
  http
    .createServer((request, response) => {
      const window = { maxMs: ms(histogram.max), p99Ms: ms(histogram.percentile(99)), meanMs: ms(histogram.mean) };
      if (request.url === "/reset") histogram.reset();
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify(window));
    })
    .listen(port, "127.0.0.1")
    .unref();
  if (process.env.RADAR_BENCH_LOOP_TRACE) trace(process.env.RADAR_BENCH_LOOP_TRACE);
}

/**
 * RADAR_BENCH_LOOP_TRACE=<file>: appends every stall of 20 ms or more and every garbage
 * collection pause of 5 ms or more to <file>, each at its time on this thread's clock, to tell a
 * collection's pause from a statement's. Where Linux tells (/proc/thread-self/sched), a stall also
 * says how much of it the thread ran and whether it waited for a core (preempted) or blocked.
 */
function trace(file) {
  const line = (text) => fs.appendFileSync(file, `${performance.now().toFixed(1)} ${text}\n`);
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.duration >= 5) line(`gc kind=${entry.detail?.kind} ${entry.duration.toFixed(1)} ms from ${entry.startTime.toFixed(1)}`);
    }
  }).observe({ entryTypes: ["gc"] });
  // Where Linux tells (/proc/thread-self/sched): the thread's CPU time, and how often it gave up
  // its core (voluntary: it blocked, on I/O or a lock) or had it taken (involuntary: preempted by
  // another thread or process, then waited for a core).
  const sched = () => {
    try {
      const text = fs.readFileSync("/proc/thread-self/sched", "utf8");
      const field = (name) => Number(new RegExp(`${name}\\s*:\\s*([\\d.]+)`).exec(text)?.[1] ?? NaN);
      const ran = field("se\\.sum_exec_runtime");
      return Number.isNaN(ran) ? null : { ran, voluntary: field("nr_voluntary_switches"), involuntary: field("nr_involuntary_switches") };
    } catch {
      return null;
    }
  };
  let last = performance.now();
  let lastSched = sched();
  setInterval(() => {
    const now = performance.now();
    const at = sched();
    if (now - last >= 20) {
      const how =
        at && lastSched
          ? ` (ran ${(at.ran - lastSched.ran).toFixed(1)} ms; blocked ${at.voluntary - lastSched.voluntary}×, preempted ${at.involuntary - lastSched.involuntary}×)`
          : "";
      line(`stall ${(now - last).toFixed(1)} ms from ${last.toFixed(1)}${how}`);
    }
    last = now;
    lastSched = at;
  }, 1).unref();
}
