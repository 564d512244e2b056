import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { LimitSnapshot } from "@/lib/ingest/limit-snapshots";

/**
 * The usage-window store on a real SQLite file: snapshots through the data path, the current row
 * per window, its history, the threads a window blocks, staleness and pruning.
 */
process.env.DATABASE_URL = `file:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), "radar-limits-")), "radar.db")}`;

type Modules = {
  limits: typeof import("./limits");
  unitOfWork: typeof import("./unit-of-work");
  pipeline: typeof import("@/lib/server/pipeline");
  tokens: typeof import("@/lib/server/tokens");
  bus: typeof import("@/lib/server/bus");
  ingest: typeof import("@/lib/ingest");
};
let m: Modules;
type Source = Parameters<Modules["pipeline"]["ingestLines"]>[0];
beforeAll(async () => {
  m = {
    limits: await import("./limits"),
    unitOfWork: await import("./unit-of-work"),
    pipeline: await import("@/lib/server/pipeline"),
    tokens: await import("@/lib/server/tokens"),
    bus: await import("@/lib/server/bus"),
    ingest: await import("@/lib/ingest"),
  };
});

let n = 0;
async function newSource(name: string): Promise<Source> {
  const { id } = await m.tokens.createSource(name, `rr_limits_${++n}_${Date.now()}`);
  return { id, name, policy: null, capacityRecovery: false } as Source;
}

function captureLines(name: string, receivedAt: number) {
  const text = fs.readFileSync(path.resolve(import.meta.dirname, "../ingest/fixtures/real-clients-2", `${name}.jsonl`), "utf8");
  const capture = m.ingest.parseCapture(text);
  return m.ingest.withoutIgnored(m.ingest.normalizeBatch(capture.format, capture.items, { receivedAt }).lines).lines;
}

const snapshot = (over: Partial<LimitSnapshot>): LimitSnapshot => ({
  account: null, provider: "openai", window: "primary", usedPercent: 10, windowMinutes: 300, resetAt: null, status: "ok", observedAt: 0, threadId: null, ...over,
});
const canonicalLine = (limits: LimitSnapshot[], key: string, at: number) => ({
  index: 0, event: null, nativeType: null, format: "canonical" as const, idempotencyKey: key, raw: {}, receivedAt: at, limits,
});

describe("usage windows through the data path", () => {
  it("a Claude rejection: the five-hour window at 100 %, and the failed thread it blocks", async () => {
    const source = await newSource("claude-oauth");
    const at = Date.parse("2026-11-30T08:28:09Z");
    await m.pipeline.ingestLines(source, captureLines("claude-ratelimit-rejected", at), at);
    const view = await m.limits.listLimitWindows(at + 60_000);
    const row = view.windows.find((w) => w.sourceId === source.id)!;
    expect(row).toMatchObject({
      source: "claude-oauth", provider: "anthropic", window: "five_hour", usedPercent: 100, windowMinutes: 300,
      resetAt: "2026-11-30T12:28:08.000Z", status: "rejected", observedAt: "2026-11-30T08:28:08.251Z", stale: false,
    });
    expect(row.blockedThreads).toEqual([expect.objectContaining({ id: "e79e78c0-92cf-4ea0-b9d6-3988a712744d" })]);
    // The thread's page sees the same link from its side.
    expect(await m.limits.windowsBlocking(row.blockedThreads[0].key, at + 60_000)).toEqual([
      { key: row.key, provider: "anthropic", window: "five_hour", usedPercent: 100, status: "rejected", resetAt: "2026-11-30T12:28:08.000Z" },
    ]);
    // Once the window has reset, it blocks nobody and its fill is stale.
    const later = (await m.limits.listLimitWindows(Date.parse("2026-11-30T12:30:00Z"))).windows.find((w) => w.sourceId === source.id)!;
    expect(later).toMatchObject({ stale: true, blockedThreads: [] });
  });

  it("a Codex usage limit: both windows, the primary one naming why it refused", async () => {
    const source = await newSource("codex-app");
    const at = Date.parse("2026-11-30T08:29:10Z");
    await m.pipeline.ingestLines(source, captureLines("codex-ratelimit-appserver-usage-limit", at), at);
    const rows = (await m.limits.listLimitWindows(at)).windows.filter((w) => w.sourceId === source.id);
    expect(rows.map((w) => [w.window, w.usedPercent, w.resetAt, w.status, w.reachedType])).toEqual([
      ["primary", 100, "2026-11-30T09:29:08.000Z", "rejected", "rate_limit_reached"],
      ["secondary", 12, "2026-12-04T23:35:48.000Z", "ok", null],
    ]);
    // "try again at 9:29 AM" gave the thread the primary window's reset.
    expect(rows[0].blockedThreads.map((t) => t.status)).toEqual(["waiting_reset"]);
    expect(rows[1].blockedThreads).toEqual([]);
  });

  it("keeps every snapshot as history; a late one never replaces the current row", async () => {
    const source = await newSource("history");
    const t = Date.now() - 10 * 60_000;
    await m.pipeline.ingestLines(source, [canonicalLine([snapshot({ usedPercent: 20, observedAt: t })], "h1", t)], t);
    await m.pipeline.ingestLines(source, [canonicalLine([snapshot({ usedPercent: 60, observedAt: t + 120_000 })], "h2", t + 120_000)], t + 120_000);
    await m.pipeline.ingestLines(source, [canonicalLine([snapshot({ usedPercent: 40, observedAt: t + 60_000 })], "h3", t + 180_000)], t + 180_000);
    const row = (await m.limits.listLimitWindows()).windows.find((w) => w.sourceId === source.id)!;
    expect(row.usedPercent).toBe(60);
    expect(row.history.map((h) => h.usedPercent)).toEqual([20, 40, 60]);
  });

  it("reads the windows as committed, never waiting behind a unit of work that writes them", async () => {
    const source = await newSource("committed");
    const t = Date.now() - 60_000;
    await m.pipeline.ingestLines(source, [canonicalLine([snapshot({ usedPercent: 30, observedAt: t })], "c1", t)], t);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let written!: () => void;
    const snapshotWritten = new Promise<void>((resolve) => (written = resolve));
    const unit = m.unitOfWork.transaction(async (tx) => {
      await tx.saveLimitSnapshots(source.id, [snapshot({ usedPercent: 90, observedAt: t + 1_000 })]);
      written();
      await gate;
    });
    await snapshotWritten;
    try {
      // The unit of work holds the writer open until the gate opens: the read answers meanwhile,
      // within this turn of the event loop, with what was committed before it.
      const read = m.limits.listLimitWindows();
      const first = await Promise.race([read.then(() => "answered"), new Promise((resolve) => setImmediate(() => resolve("still waiting")))]);
      expect(first).toBe("answered");
      expect((await read).windows.find((w) => w.sourceId === source.id)!.usedPercent).toBe(30);
    } finally {
      release();
      await unit;
    }
    expect((await m.limits.listLimitWindows()).windows.find((w) => w.sourceId === source.id)!.usedPercent).toBe(90);
  });

  it("a snapshot older than the stale bound is flagged", async () => {
    const source = await newSource("stale");
    const t = Date.now() - m.limits.LIMIT_STALE_MS - 60_000;
    await m.pipeline.ingestLines(source, [canonicalLine([snapshot({ observedAt: t })], "s1", t)], t);
    expect((await m.limits.listLimitWindows()).windows.find((w) => w.sourceId === source.id)!.stale).toBe(true);
  });

  it("announces a limits change on the bus after the unit of work", async () => {
    const source = await newSource("bus");
    const seen: number[] = [];
    const off = m.bus.subscribe("limits", (message) => seen.push(message.at));
    const t = Date.now();
    await m.pipeline.ingestLines(source, [canonicalLine([snapshot({ observedAt: t })], "b1", t)], t);
    // At once, or at the end of a window an earlier change opened.
    await new Promise((resolve) => setTimeout(resolve, m.bus.COALESCE_MS * 2 + 10));
    off();
    expect(seen.length).toBeGreaterThan(0);
  });

  it("retention prunes old history and keeps the current rows", async () => {
    const source = await newSource("prune");
    const t = Date.parse("2020-01-01T00:00:00Z");
    await m.pipeline.ingestLines(source, [canonicalLine([snapshot({ observedAt: t }), snapshot({ window: "secondary", observedAt: t })], "p1", t)], t);
    expect(await m.limits.pruneLimitSnapshots(t + 1, 1)).toBe(1);
    expect(await m.limits.pruneLimitSnapshots(t + 1, 10)).toBe(1);
    const rows = (await m.limits.listLimitWindows()).windows.filter((w) => w.sourceId === source.id);
    expect(rows.map((w) => [w.window, w.history.length])).toEqual([["primary", 0], ["secondary", 0]]);
  });
});
