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
 * says how much of it the thread ran: the rest it waited, for a core on a busy machine or for I/O.
 */
function trace(file) {
  const line = (text) => fs.appendFileSync(file, `${performance.now().toFixed(1)} ${text}\n`);
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.duration >= 5) line(`gc kind=${entry.detail?.kind} ${entry.duration.toFixed(1)} ms from ${entry.startTime.toFixed(1)}`);
    }
  }).observe({ entryTypes: ["gc"] });
  const ranMs = () => {
    try {
      const found = /se\.sum_exec_runtime\s*:\s*([\d.]+)/.exec(fs.readFileSync("/proc/thread-self/sched", "utf8"));
      return found ? Number(found[1]) : null;
    } catch {
      return null;
    }
  };
  let last = performance.now();
  let lastRan = ranMs();
  setInterval(() => {
    const now = performance.now();
    const ran = ranMs();
    if (now - last >= 20) line(`stall ${(now - last).toFixed(1)} ms from ${last.toFixed(1)}${ran !== null && lastRan !== null ? ` (ran ${(ran - lastRan).toFixed(1)} ms)` : ""}`);
    last = now;
    lastRan = ran;
  }, 1).unref();
}
