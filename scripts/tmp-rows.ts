import { postEvents } from "./lib/post-events";
import { startServer } from "./lib/server";
import { percentile } from "./lib/stats";
import http from "node:http";

const agent = new http.Agent({ keepAlive: true });
function get(url: string, key: string): Promise<{ ms: number; status: number; renderer: string | undefined; len: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http.get(url, { agent, headers: { authorization: `Bearer ${key}`, accept: "application/json" } }, (res) => {
      let len = 0;
      res.on("data", (c: Buffer) => (len += c.length));
      res.on("end", () => resolve({ ms: performance.now() - started, status: res.statusCode ?? 0, renderer: res.headers["x-radar-renderer"] as string | undefined, len }));
    }).on("error", reject);
  });
}
const LOAD_BATCH = 50, LOAD_RUN = 10;
function loadBatch(client: number, n: number, at: number) {
  const types = ["turn.started", "retry", "attempt", "progress", "retry", "attempt", "progress", "progress", "progress", "progress"] as const;
  return Array.from({ length: LOAD_BATCH }, (_, i) => {
    const thread = `load-${client}-${n * (LOAD_BATCH / LOAD_RUN) + Math.floor(i / LOAD_RUN)}`;
    const type = types[i % LOAD_RUN];
    const base = { threadId: thread, turnId: "turn-1", type, at: at + i, agent: "claude-code", provider: "anthropic", model: "claude-sonnet" };
    if (type === "retry") return { ...base, attempt: 1, maxAttempts: 5, error: { httpStatus: 529, code: "overloaded_error", message: "Overloaded" } };
    if (type === "attempt") return { ...base, attempt: 1 };
    return base;
  });
}
const server = await startServer({ ...(process.env.INLINE ? { RADAR_PAGE_RENDERER: "inline" } : {}) });
try {
  const start = Date.now() - 60_000;
  for (let i = 0; i < 200; i += 50) await postEvents(server, Array.from({ length: 50 }, (_, j) => ({ threadId: `seed-${i + j}`, type: "turn.started", at: start + i + j, agent: "codex" })));
  const keys = Array.from({ length: 20 }, (_, i) => i + 1).join(",");
  const views = { rows: `${server.url}/api/v1/threads?keys=${keys}&matching=1`, page: `${server.url}/api/v1/threads?order=attention`, incidents: `${server.url}/api/v1/incidents?state=open` , health: `${server.url}/api/health`};
  async function round(label: string) {
    for (const [name, url] of Object.entries(views)) {
      const ms: number[] = [];
      let last;
      for (let i = 0; i < 30; i++) { last = await get(url, server.apiKey); ms.push(last.ms); await new Promise((r) => setTimeout(r, 30)); }
      ms.sort((a, b) => a - b);
      console.log(`${label} ${name}: p50 ${percentile(ms, 50).toFixed(1)} p95 ${percentile(ms, 95).toFixed(1)} max ${ms.at(-1)!.toFixed(1)} (${last!.status}, renderer ${last!.renderer}, ${last!.len} B)`);
    }
  }
  await round("idle");
  let loading = true, batches = 0;
  const load = Array.from({ length: 4 }, async (_, c) => { for (let n = 0; loading; n++) { await postEvents(server, loadBatch(c, n, Date.now())); batches++; } });
  const t0 = performance.now();
  const cpu0 = server.mainThreadCpuMs();
  await round("loaded");
  console.log(`batches/s ${(batches / ((performance.now() - t0) / 1000)).toFixed(0)}, main thread CPU ${((server.mainThreadCpuMs()! - cpu0!) / (performance.now() - t0) * 100).toFixed(0)} %`);
  loading = false;
  await Promise.all(load);
} finally {
  await server.stop();
}
