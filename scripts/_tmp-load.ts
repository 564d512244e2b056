import { startServer } from "./lib/server";
import { percentile } from "./lib/stats";
const server = await startServer({});
const post = async (events: unknown[]) => {
  const r = await fetch(`${server.url}/api/v1/events`, { method: "POST", headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" }, body: JSON.stringify(events) });
  await r.arrayBuffer();
};
const start = Date.now() - 60000;
for (let i = 0; i < 200; i += 50) await post(Array.from({ length: 50 }, (_, j) => ({ threadId: `seed-${i + j}`, type: "turn.started", at: start + i + j, agent: "codex" })));
function loadBatch(client: number, n: number, at: number) {
  const types = ["turn.started", "retry", "attempt", "progress", "retry", "attempt", "progress", "progress", "progress", "progress"] as const;
  return Array.from({ length: 50 }, (_, i) => {
    const thread = `load-${client}-${n * 5 + Math.floor(i / 10)}`;
    const type = types[i % 10];
    const base = { threadId: thread, turnId: "turn-1", type, at: at + i, agent: "claude-code", provider: "anthropic", model: "claude-sonnet" };
    if (type === "retry") return { ...base, attempt: 1, maxAttempts: 5, error: { httpStatus: 529, code: "overloaded_error", message: "Overloaded" } };
    if (type === "attempt") return { ...base, attempt: 1 };
    return base;
  });
}
const paths = ["/api/health", "/api/v1/threads?order=attention", "/api/v1/threads?keys=1,2,3", "/api/v1/threads?keys=1,2,3&matching=1&order=attention"];
async function measure(label: string) {
  for (const p of paths) {
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      const t = performance.now();
      const r = await server.fetch(p);
      await r.arrayBuffer();
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    console.log(label, p, "p50", percentile(times, 50).toFixed(1), "p90", percentile(times, 90).toFixed(1));
  }
}
await measure("idle");
let loading = true; let batches = 0; const batchTimes: number[] = [];
const load = Array.from({ length: 4 }, async (_, c) => { for (let n = 0; loading; n++) { const t = performance.now(); await post(loadBatch(c, n, Date.now())); batchTimes.push(performance.now() - t); batches++; } });
const t0 = performance.now();
await measure("load");
loading = false; await Promise.all(load);
batchTimes.sort((a, b) => a - b);
console.log("batches/s", (batches / ((performance.now() - t0) / 1000)).toFixed(1), "batch p50", percentile(batchTimes, 50).toFixed(1));
await server.stop();
