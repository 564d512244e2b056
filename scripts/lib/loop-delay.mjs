// Benchmarks only: preloaded into the server under test (NODE_OPTIONS=--import …) to measure how
// long its event loop stalls. It answers on its own loopback port, RADAR_BENCH_LOOP_PORT:
// GET /reset starts a window, GET / returns that window's stalls ({maxMs, p99Ms, meanMs}).
// Worker threads (the read worker, the page renderer: neither ingests) are not measured.
import http from "node:http";
import { isMainThread } from "node:worker_threads";
import { monitorEventLoopDelay } from "node:perf_hooks";

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
}
