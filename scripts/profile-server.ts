import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { event, postJson, singlesRun } from "./bench-ingest";
import { benchDatabase } from "./bench-insights";
import { copyDatabaseInto } from "./lib/disk";
import { startServer } from "./lib/server";

/**
 * Where the built server's main thread (the one that ingests) spends its time, under one load:
 * `npx tsx scripts/profile-server.ts <board|insights|thread|singles|batch> [database]`.
 * - `board` / `insights` / `thread` / `export`: 20 renders of the board page / the 7-day insights
 *   page / one thread's page, or 20 reads of the 24-hour attempts export (CSV, gzipped as a
 *   browser asks), on a copy of the 1M-event database (bench-insights.ts; a file given saves
 *   building it);
 * - `singles`: 3,000 single-event POSTs from 8 clients; `batch`: 40 batches of 500.
 * The profile starts after a warm-up (scripts/lib/cpu-profile.mjs) and is written when the server
 * stops; the functions taking the most time, by self and by inclusive time, are printed, and the
 * .cpuprofile file's path (Chrome DevTools opens it).
 */
const SCENARIOS = ["board", "insights", "thread", "export", "singles", "batch"] as const;
type Scenario = (typeof SCENARIOS)[number];
/** What each read scenario GETs (the thread is one of bench-insights.ts's, 100 events). */
const GETS: Partial<Record<Scenario, string>> = {
  board: "/",
  insights: "/insights?range=7d",
  thread: "/threads/thread-99",
  export: "/api/v1/exports/attempts?range=24h&format=csv",
};
const TOP = 30;

async function profile(scenario: Scenario, databaseFile?: string): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-profile-server-"));
  const reads = GETS[scenario] !== undefined;
  const file = reads ? copyDatabaseInto(dir, databaseFile ?? benchDatabase().file) : undefined;
  const preload = pathToFileURL(path.join(import.meta.dirname, "lib", "cpu-profile.mjs")).href;
  const server = await startServer({ NODE_OPTIONS: `--import ${preload}`, RADAR_PROFILE_DIR: dir }, file ? { databaseFile: file } : undefined);
  // The process listening on the server's port: the one to profile.
  const port = new URL(server.url).port;
  const pid = Number(/pid=(\d+)/.exec(execFileSync("ss", ["-ltnpH", `sport = :${port}`]).toString())?.[1]);
  const start = () => process.kill(pid, "SIGUSR2");
  const base = Date.now() - 86_400_000;
  try {
    if (reads) {
      const pathname = GETS[scenario]!;
      for (let i = 0; i < 3; i++) await (await server.fetch(pathname)).text();
      start();
      for (let i = 0; i < 20; i++) {
        const response = await server.fetch(pathname);
        await response.text();
        if (!response.ok) throw new Error(`${pathname}: ${response.status}`);
      }
    } else if (scenario === "singles") {
      await singlesRun(server, 8, 500, base - 10_000_000);
      start();
      const run = await singlesRun(server, 8, 3_000, base);
      console.log(`${run.requestsPerSecond}/s p99 ${run.p99Ms} ms, main-thread CPU ${run.cpuMsPerRequest} ms/request (profiled)`);
    } else {
      for (let b = 0; b < 5; b++) await postJson(server, Array.from({ length: 500 }, (_, i) => event(b * 500 + i, base - 5_000_000)));
      start();
      for (let b = 0; b < 40; b++) await postJson(server, Array.from({ length: 500 }, (_, i) => event(b * 500 + i, base)));
    }
  } finally {
    await server.stop();
    // The copied database goes (it is large); the profile stays.
    if (file) for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
  }
  const written = fs.readdirSync(dir).find((name) => name.endsWith(".cpuprofile"));
  if (!written) throw new Error(`no profile was written in ${dir}`);
  return path.join(dir, written);
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

/** The TOP functions by self time and by inclusive time (a function counted once per stack). */
function summary(file: string): string {
  const { nodes, samples, timeDeltas } = JSON.parse(fs.readFileSync(file, "utf8")) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const parent = new Map<number, number>();
  for (const node of nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const label = ({ callFrame: f }: ProfileNode) => `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*\/(\.next|node_modules)\//, "$1/")}:${f.lineNumber + 1}:${f.columnNumber + 1}`;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  samples.forEach((id, i) => {
    const us = timeDeltas[i] ?? 0;
    total += us;
    self.set(label(byId.get(id)!), (self.get(label(byId.get(id)!)) ?? 0) + us);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = label(byId.get(at)!);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + us);
    }
  });
  const table = (title: string, times: Map<string, number>) => [
    `${title} (of ${(total / 1000).toFixed(0)} ms sampled):`,
    ...[...times].sort((a, b) => b[1] - a[1]).slice(0, TOP).map(([name, us]) => `${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / total).toFixed(1).padStart(5)} %  ${name}`),
  ];
  return [...table("self time", self), "", ...table("inclusive time", inclusive)].join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const scenario = process.argv[2] as Scenario;
  if (!SCENARIOS.includes(scenario)) {
    console.error(`usage: npx tsx scripts/profile-server.ts <${SCENARIOS.join("|")}> [database]`);
    process.exit(2);
  }
  profile(scenario, process.argv[3]).then((file) => console.log(`${summary(file)}\n\nprofile: ${file}`));
}
