// Benchmarks only: preloaded into the server under test (NODE_OPTIONS=--import …) to measure how
// long its event loop stalls. It answers on its own loopback port, RADAR_BENCH_LOOP_PORT:
// GET /reset starts a window, GET / returns that window's stalls ({maxMs, p99Ms, meanMs,
// maxOwnMs, maxWaitedMs}). Worker threads (the read worker, the page renderer: neither ingests)
// are not measured.
import http from "node:http";
import { isMainThread } from "node:worker_threads";
import fs from "node:fs";
import { monitorEventLoopDelay, performance, PerformanceObserver } from "node:perf_hooks";

const port = Number(process.env.RADAR_BENCH_LOOP_PORT);
if (isMainThread && port) {
  const traceFromMs = Number(process.env.RADAR_BENCH_LOOP_TRACE_MS || 20);
  if (!(traceFromMs > 0)) throw new Error(`RADAR_BENCH_LOOP_TRACE_MS must be a number of milliseconds above 0; got "${process.env.RADAR_BENCH_LOOP_TRACE_MS}"`);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const ms = (ns) => +(ns / 1e6).toFixed(1);
  const gaps = sampleGaps(process.env.RADAR_BENCH_LOOP_TRACE, traceFromMs);
  http
    .createServer((request, response) => {
      const window = { maxMs: ms(histogram.max), p99Ms: ms(histogram.percentile(99)), meanMs: ms(histogram.mean), ...gaps.window() };
      if (request.url === "/reset") {
        histogram.reset();
        gaps.reset();
      }
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify(window));
    })
    .listen(port, "127.0.0.1")
    .unref();
}

/** The thread's time waiting for a core (runnable but preempted), in ms; null where Linux cannot tell (/proc/thread-self/schedstat). */
function waitedForCore() {
  try {
    return Number(fs.readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[1]) / 1e6;
  } catch {
    return null;
  }
}

/**
 * A timer every millisecond: a gap between two of its ticks is the thread's own work (running,
 * or blocked on I/O or a lock) plus the time it waited for a core, preempted by another thread or
 * process on a busy machine. Linux counts that wait exactly, when the thread gets its core back
 * (schedstat's run delay; its CPU time there moves in scheduler ticks, too coarse here). The
 * window keeps the longest gap without that wait, `maxOwnMs`: an upper bound of the thread's
 * longest synchronous stretch whatever the machine does; and the longest wait, `maxWaitedMs`.
 * Reading the counter costs about 11 µs a tick (1 % of the thread), in every window alike.
 *
 * `traceFile` (RADAR_BENCH_LOOP_TRACE=<file>): every gap of `traceFromMs` or more
 * (RADAR_BENCH_LOOP_TRACE_MS, 20 by default), split so, and every garbage collection pause of 5 ms
 * or more (or of half that bound, if less) are appended to it, each at its time on this thread's
 * clock, to tell a collection's pause from a statement's.
 */
function sampleGaps(traceFile, traceFromMs) {
  const line = (text) => fs.appendFileSync(traceFile, `${performance.now().toFixed(1)} ${text}\n`);
  if (traceFile) {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        if (entry.duration >= Math.min(5, traceFromMs / 2)) line(`gc kind=${entry.detail?.kind} ${entry.duration.toFixed(1)} ms from ${entry.startTime.toFixed(1)}`);
      }
    }).observe({ entryTypes: ["gc"] });
  }
  let maxOwnMs = 0;
  let maxWaitedMs = 0;
  let last = performance.now();
  let lastWaited = waitedForCore();
  setInterval(() => {
    const now = performance.now();
    const waitedNow = waitedForCore();
    const gap = now - last;
    const waited = waitedNow !== null && lastWaited !== null ? waitedNow - lastWaited : null;
    if (waited !== null) {
      maxOwnMs = Math.max(maxOwnMs, gap - waited);
      maxWaitedMs = Math.max(maxWaitedMs, waited);
    }
    if (traceFile && gap >= traceFromMs) {
      line(`stall ${gap.toFixed(1)} ms from ${last.toFixed(1)}${waited === null ? "" : ` (waited for a core ${waited.toFixed(1)} ms, its own ${(gap - waited).toFixed(1)} ms)`}`);
    }
    last = now;
    lastWaited = waitedNow;
  }, 1).unref();
  const round = (value) => +value.toFixed(1);
  return {
    window: () => (lastWaited === null ? { maxOwnMs: null, maxWaitedMs: null } : { maxOwnMs: round(maxOwnMs), maxWaitedMs: round(maxWaitedMs) }),
    reset() {
      maxOwnMs = 0;
      maxWaitedMs = 0;
    },
  };
}
