// Benchmarks only: preloaded into the server under test (NODE_OPTIONS=--import …) to measure how
// long its event loop stalls. It answers on its own loopback port, RADAR_BENCH_LOOP_PORT:
// GET /reset starts a window, GET / returns that window's stalls ({maxMs, p99Ms, meanMs,
// maxOwnMs, maxWaitedMs}). Worker threads (the read worker: it does not ingest) are
// not measured.
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
 * A gap's own work at most: the gap less the time the thread sat idle (libuv's count) or waited
 * for a core (Linux's), whichever is larger, since the wait for a core after a wake-up is in both.
 */
export function ownWorkMs(gapMs, idleMs, waitedMs) {
  return Math.max(0, gapMs - Math.max(idleMs, waitedMs));
}

/** The thread's minor and major page faults so far (/proc/thread-self/stat's 10th and 12th fields); null where Linux cannot tell. */
function pageFaults() {
  try {
    const stat = fs.readFileSync("/proc/thread-self/stat", "utf8");
    // After the name in parentheses, which may hold anything, ") " included.
    const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
    return [Number(fields[7]), Number(fields[9])];
  } catch {
    return null;
  }
}

/**
 * A timer every millisecond: a gap between two of its ticks is the thread's own work (running,
 * or blocked on I/O or a lock), the time it sat idle waiting for events (libuv's idle time, which
 * a late wake-up on this virtual machine lengthens: gaps of 5–15 ms with under a millisecond of
 * work in them, whose CPU profile samples were "(idle)"), and the time it waited for a core,
 * preempted by another thread or process on a busy machine. Linux counts that wait exactly, when
 * the thread gets its core back (schedstat's run delay; its CPU time there moves in scheduler
 * ticks, too coarse here).
 * A wake-up's wait for a core is in both the idle time and the run delay, so the gap less the
 * larger of the two is an upper bound of the thread's busy time in it: the window keeps the
 * longest, `maxOwnMs` (the longest synchronous stretch at most, whatever the machine does), and
 * the longest wait for a core, `maxWaitedMs`. Reading both counters costs about 12 µs a tick
 * (1 % of the thread), in every window alike.
 *
 * `traceFile` (RADAR_BENCH_LOOP_TRACE=<file>): every gap of `traceFromMs` or more
 * (RADAR_BENCH_LOOP_TRACE_MS, 20 by default), split so, every window's start, and every garbage
 * collection pause of 5 ms or more (or of half that bound, if less) are appended to it, each at its
 * time on this thread's clock, to tell a collection's pause from a statement's, and on
 * CLOCK_MONOTONIC's (`mono=`, ms), the clock of `perf record -k CLOCK_MONOTONIC`, to find a gap
 * among the kernel's scheduler events (time blocked in an fsync counts as the thread's own); a
 * gap's line has the thread's page faults in it too (minor/major), read at every tick only while
 * tracing.
 */
function sampleGaps(traceFile, traceFromMs) {
  const line = (text) => fs.appendFileSync(traceFile, `${performance.now().toFixed(1)} mono=${(Number(process.hrtime.bigint()) / 1e6).toFixed(3)} ${text}\n`);
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
  let lastIdle = performance.eventLoopUtilization().idle;
  let lastFaults = traceFile ? pageFaults() : null;
  setInterval(() => {
    const now = performance.now();
    const waitedNow = waitedForCore();
    const idleNow = performance.eventLoopUtilization().idle;
    const gap = now - last;
    const idle = idleNow - lastIdle;
    const waited = waitedNow !== null && lastWaited !== null ? waitedNow - lastWaited : null;
    const own = waited === null ? null : ownWorkMs(gap, idle, waited);
    if (own !== null) {
      maxOwnMs = Math.max(maxOwnMs, own);
      maxWaitedMs = Math.max(maxWaitedMs, waited);
    }
    const faultsNow = traceFile ? pageFaults() : null;
    if (traceFile && gap >= traceFromMs) {
      const faults = faultsNow && lastFaults ? `, page faults ${faultsNow[0] - lastFaults[0]}/${faultsNow[1] - lastFaults[1]}` : "";
      line(`stall ${gap.toFixed(1)} ms from ${last.toFixed(1)} (idle ${idle.toFixed(1)} ms${waited === null ? "" : `, waited for a core ${waited.toFixed(1)} ms, its own ${own.toFixed(1)} ms`}${faults})`);
    }
    last = now;
    lastWaited = waitedNow;
    lastIdle = idleNow;
    lastFaults = faultsNow;
  }, 1).unref();
  const round = (value) => +value.toFixed(1);
  return {
    window: () => (lastWaited === null ? { maxOwnMs: null, maxWaitedMs: null } : { maxOwnMs: round(maxOwnMs), maxWaitedMs: round(maxWaitedMs) }),
    reset() {
      if (traceFile) line("window");
      maxOwnMs = 0;
      maxWaitedMs = 0;
    },
  };
}
