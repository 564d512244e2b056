import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generator } from "@/e2e/support/seeded";
import { timeRange } from "@/lib/insights/range";
import { THREAD_STATUSES } from "@/lib/retry/types";
import { openDatabase, type DatabaseHandles } from "./client";
import { readInsights } from "./insights";
import { rebuildRollups } from "./rollups";

/**
 * The top threads of long ranges are found by bounds (each thread's wait total of all time): the
 * same list as summing every thread's raw waits, on threads whose waits differ widely (so the
 * search stops early) or hardly (so it gives up), with waits still open at the horizon.
 */
const H = 3_600_000;
const T0 = Date.UTC(2026, 10, 20, 0, 0, 0);
const THREADS = 200;

let handles: DatabaseHandles;
let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-insights-top-"));
  handles = openDatabase(path.join(dir, "radar.db"));
  const { sql } = handles;
  const random = generator(11).next;
  sql.prepare(`INSERT INTO "Source" (id, name, createdAt) VALUES ('s', 'codex@top', ?)`).run(T0);
  const thread = sql.prepare(
    `INSERT INTO "Thread" (id, sourceId, externalId, agent, provider, model, status, state, createdAt, updatedAt) VALUES (?, 's', ?, 'codex', ?, 'm', 'retrying', '{}', ?, ?)`,
  );
  const episode = sql.prepare(`INSERT INTO "Episode" (threadId, seq, kind, policy, startedAt, endedAt, outcome) VALUES (?, ?, ?, 'default', ?, ?, ?)`);
  const attempt = sql.prepare(`INSERT INTO "Attempt" (episodeId, n, noticeAt, advisedDelayMs, startedAt) VALUES (?, ?, ?, 2000, ?)`);
  for (let t = 1; t <= THREADS; t++) {
    thread.run(t, `th-${t}`, t % 2 ? "openai" : "anthropic", T0, T0);
    // A few threads wait far longer than the rest; the rest alike.
    const scale = t % 13 === 0 ? 40 : 1 + random();
    for (let seq = 1; seq <= 8; seq++) {
      const start = T0 + Math.floor(random() * 60) * H + Math.floor(random() * H);
      const open = seq === 8 && t % 7 === 0;
      const id = Number(episode.run(t, seq, random() < 0.5 ? "rate_limit" : "capacity", start, open ? null : start + 20 * 60_000, open ? null : "recovered").lastInsertRowid);
      attempt.run(id, 1, start, Math.round(start + scale * 60_000 * random()));
      attempt.run(id, 2, start + 10 * 60_000, open ? null : Math.round(start + 10 * 60_000 + scale * 30_000 * random()));
    }
  }
  sql.transaction(() => rebuildRollups(sql))();
});

afterAll(async () => {
  await handles.prisma.$disconnect();
  handles.sql.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("the top threads of a range bucketed by hours", () => {
  it.each([
    ["the whole history", T0 - H, T0 + 62 * H, T0 + 62 * H],
    ["a day within it", T0 + 20 * H, T0 + 44 * H, T0 + 62 * H],
    ["a range ending before now, cutting open waits", T0 + 5 * H + 1_234, T0 + 40 * H + 4_321, T0 + 62 * H],
    ["a range reaching past now", T0, T0 + 70 * H, T0 + 30 * H],
  ])("equal the sum of every thread's raw waits: %s", (_name, from, to, now) => {
    for (const kind of [undefined, ["capacity" as const]]) {
      const query = { filter: { kind }, range: timeRange("custom", from, to), split: "kind" as const };
      expect(query.range.bucketMs % H).toBe(0);
      const bounded = readInsights(query, now, handles.sql);
      // Every status names the same threads but sends every chart to the raw facts.
      const summed = readInsights({ ...query, filter: { ...query.filter, status: [...THREAD_STATUSES] } }, now, handles.sql);
      expect(bounded.topThreads).toHaveLength(10);
      expect(bounded.topThreads).toEqual(summed.topThreads);
      expect(bounded.timeLost).toEqual(summed.timeLost);
      expect(bounded.earlyByAgent).toEqual(summed.earlyByAgent);
    }
  });
});
