import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { countUnitsOfWork } from "@/e2e/support/in-process";

/**
 * Incidents on the data path, on a real SQLite file: notices stored by ingestion open an incident
 * in the same unit of work, recoveries and the watchdog's quiet pass close it, and the readers
 * (list, detail, board markers, metrics) show it.
 */
process.env.DATABASE_URL = `file:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), "radar-incidents-")), "radar.db")}`;

type Modules = {
  incidents: typeof import("./incidents");
  metrics: typeof import("./metrics");
  pipeline: typeof import("@/lib/server/pipeline");
  tokens: typeof import("@/lib/server/tokens");
  ingest: typeof import("@/lib/ingest");
};
let m: Modules;
type Source = Parameters<Modules["pipeline"]["ingestLines"]>[0];
beforeAll(async () => {
  m = {
    incidents: await import("./incidents"),
    metrics: await import("./metrics"),
    pipeline: await import("@/lib/server/pipeline"),
    tokens: await import("@/lib/server/tokens"),
    ingest: await import("@/lib/ingest"),
  };
});

let n = 0;
async function newSource(name: string): Promise<Source> {
  const { id } = await m.tokens.createSource(name, `rr_incidents_${++n}_${Date.now()}`);
  return { id, name, policy: null, capacityRecovery: false } as Source;
}

const T = Date.parse("2026-11-30T14:02:00Z");

/** How many times statements whose text matches `text` ran on `connection` while `run` ran. */
async function statementRunsDuring(connection: import("better-sqlite3").Database, text: RegExp, run: () => Promise<unknown>): Promise<number> {
  const prototype = Object.getPrototypeOf(connection.prepare("SELECT 1")) as Record<"run" | "get" | "all", (...args: unknown[]) => unknown>;
  const originals = { run: prototype.run, get: prototype.get, all: prototype.all };
  let runs = 0;
  for (const method of ["run", "get", "all"] as const) {
    prototype[method] = function (this: import("better-sqlite3").Statement, ...args: unknown[]) {
      if (this.database === connection && text.test(this.source)) runs++;
      return originals[method].apply(this, args);
    };
  }
  try {
    await run();
  } finally {
    Object.assign(prototype, originals);
  }
  return runs;
}

async function send(source: Source, items: Record<string, unknown>[], receivedAt: number) {
  const lines = m.ingest.withoutIgnored(m.ingest.normalizeBatch("canonical", items, { receivedAt }).lines).lines;
  return m.pipeline.ingestLines(source, lines, receivedAt);
}
const retry = (threadId: string, at: number, model = "gpt-5.5") => ({
  threadId, type: "retry", at: new Date(at).toISOString(), turnId: "u1", attempt: 1, maxAttempts: 5, provider: "openai", model,
  error: { httpStatus: 429, message: "Rate limit reached." },
});

describe("incidents through the data path", () => {
  it("a burst on one model opens one incident in the batch that stored it; the watchdog closes it after the quiet period", async () => {
    const source = await newSource("fleet-a");
    await send(source, [retry("a1", T), retry("a2", T + 5_000)], T + 5_000);
    expect((await m.incidents.listIncidents("all", T + 5_000)).incidents).toEqual([]);
    await send(source, [retry("a3", T + 20_000), retry("b1", T + 21_000, "gpt-5.4")], T + 20_000);
    const [open] = (await m.incidents.listIncidents("open", T + 30_000)).incidents;
    expect(open).toMatchObject({ state: "open", kind: "rate_limit", scope: "openai · gpt-5.5", threadCount: 3, notices: 3, startedAt: new Date(T).toISOString(), stoppable: 3 });
    expect((await m.incidents.openIncidentThreads()).size).toBe(3);
    const detail = await m.incidents.incidentDetail(open.id, T + 30_000);
    expect(detail!.threads.map((t) => t.id).sort()).toEqual(["a1", "a2", "a3"]);
    expect(detail!.timeline.reduce((sum, r) => sum + r.notices, 0)).toBe(3);
    const metrics = await m.metrics.metricsSnapshot(T + 30_000);
    expect(metrics.incidentsOpen).toEqual([{ kind: "rate_limit", provider: "openai", model: "gpt-5.5", value: 1 }]);
    expect(metrics.incidentsTotal).toBe(1);

    expect(await m.incidents.acknowledgeIncident(open.id, "ops@example.com", T + 40_000)).toBe(true);
    // The detector's next save keeps who is on it.
    await send(source, [retry("a4", T + 50_000)], T + 50_000);
    expect(await m.incidents.incidentDetail(open.id, T + 60_000)).toMatchObject({ threadCount: 4, acknowledgedBy: "ops@example.com", acknowledgedAt: new Date(T + 40_000).toISOString() });

    await m.pipeline.closeQuietIncidents(T + 50_000 + 5 * 60_000 - 1);
    expect((await m.incidents.incidentDetail(open.id, T + 6 * 60_000))!.state).toBe("open");
    await m.pipeline.closeQuietIncidents(T + 50_000 + 5 * 60_000);
    expect(await m.incidents.incidentDetail(open.id, T + 6 * 60_000)).toMatchObject({ state: "closed", closedBy: "quiet", endedAt: new Date(T + 50_000).toISOString() });
    expect(await m.incidents.acknowledgeIncident(open.id, "late@example.com", T + 7 * 60_000)).toBe(false);
    // Notes stay possible after it closed: the review happens later.
    expect(await m.incidents.annotateIncident(open.id, "ops@example.com", "failed over to gpt-5.4", T + 8 * 60_000)).toBe(true);
    expect(await m.incidents.annotateIncident("inc-nope", "ops@example.com", "lost", T + 8 * 60_000)).toBe(false);
    expect((await m.incidents.incidentDetail(open.id, T + 9 * 60_000))!.notes).toEqual([{ at: new Date(T + 8 * 60_000).toISOString(), actor: "ops@example.com", text: "failed over to gpt-5.4" }]);
    expect((await m.incidents.openIncidentThreads()).size).toBe(0);
  });

  it("folds notices that arrive together once per commit, every one of them counted", async () => {
    const source = await newSource("fleet-together");
    const at = T + 2 * 60 * 60_000;
    const { db } = await import("./client");
    const reads = await statementRunsDuring(db().sql, /FROM "Incident" WHERE state IN \('forming', 'open'\)/, () =>
      Promise.all(Array.from({ length: 8 }, (_, i) => send(source, [retry(`g${i}`, at + i, "o-together")], at + 10))),
    );
    // One group commit, one fold: the active incidents were read once, not once per request.
    expect(reads).toBe(1);
    const [open] = (await m.incidents.listIncidents("open", at + 10)).incidents.filter((i) => i.model === "o-together");
    expect(open).toMatchObject({ threadCount: 8, notices: 8, startedAt: new Date(at).toISOString() });
  });

  it("never closes for quiet an incident that a notice in the same commit keeps open", async () => {
    const source = await newSource("fleet-late");
    const at = T + 3 * 60 * 60_000;
    await send(source, ["l1", "l2", "l3"].map((id, i) => retry(id, at + i * 1000, "o-late")), at + 2_000);
    const [open] = (await m.incidents.listIncidents("open", at + 2_000)).incidents.filter((i) => i.model === "o-late");
    const quietEnd = at + 2_000 + 5 * 60_000;
    const { db } = await import("./client");
    // The watchdog's pass comes due as a late notice arrives: both join one group commit.
    const { units } = await countUnitsOfWork(db().sql, () => Promise.all([send(source, [retry("l4", quietEnd - 1_000, "o-late")], quietEnd - 1_000), m.pipeline.closeQuietIncidents(quietEnd)]));
    expect(units).toBe(1);
    expect(await m.incidents.incidentDetail(open.id, quietEnd)).toMatchObject({ state: "open", threadCount: 4, notices: 4, lastNoticeAt: new Date(quietEnd - 1_000).toISOString() });
  });

  it("reads an incident's thread list again only when its revision is not the one it last read or saved", async () => {
    const source = await newSource("fleet-known");
    const at = T + 4 * 60 * 60_000;
    await send(source, ["k1", "k2", "k3"].map((id, i) => retry(id, at + i * 1000, "o-known")), at + 2_000);
    const [open] = (await m.incidents.listIncidents("open", at + 2_000)).incidents.filter((i) => i.model === "o-known");
    const { db } = await import("./client");
    // The statements that read the lists: the whole rows (as before the revision), or the lists alone.
    const listReads = (run: () => Promise<unknown>) => statementRunsDuring(db().sql, /SELECT (\*|id, revision, threads) FROM "Incident"/, run);
    // Saved by this process: known, never read back.
    expect(await listReads(() => send(source, [retry("k4", at + 3_000, "o-known")], at + 3_000))).toBe(0);
    expect(await listReads(() => send(source, [retry("k1", at + 4_000, "o-known")], at + 4_000))).toBe(0);
    // Another writer (another instance, or a save rolled back) leaves another revision: read again, and its list is the one folded.
    const stored = db().sql.prepare(`SELECT threads FROM "Incident" WHERE id = ?`).pluck().get(open.id) as string;
    const other = [...JSON.parse(stored), { thread: 999_999, sourceId: source.id, firstNoticeAt: at + 4_500, lastNoticeAt: at + 4_500, notices: 1, recoveredAt: null }];
    db().sql.prepare(`UPDATE "Incident" SET threads = ?, threadCount = ?, revision = 'elsewhere' WHERE id = ?`).run(JSON.stringify(other), other.length, open.id);
    expect(await listReads(() => send(source, [retry("k5", at + 5_000, "o-known")], at + 5_000))).toBe(1);
    expect(await m.incidents.incidentDetail(open.id, at + 5_000)).toMatchObject({ threadCount: 6, notices: 6 });
    expect(await listReads(() => send(source, [retry("k2", at + 6_000, "o-known")], at + 6_000))).toBe(0);
    // A row without a revision (a writer that sets none) is read every time, even right after a fold read it.
    db().sql.prepare(`UPDATE "Incident" SET revision = '' WHERE id = ?`).run(open.id);
    expect(await listReads(() => m.pipeline.closeQuietIncidents(at + 7_000))).toBe(1);
    const listed = JSON.parse(db().sql.prepare(`SELECT threads FROM "Incident" WHERE id = ?`).pluck().get(open.id) as string);
    const more = [...listed, { thread: 777_777, sourceId: source.id, firstNoticeAt: at + 7_500, lastNoticeAt: at + 7_500, notices: 1, recoveredAt: null }];
    db().sql.prepare(`UPDATE "Incident" SET threads = ?, threadCount = ? WHERE id = ?`).run(JSON.stringify(more), more.length, open.id);
    expect(await listReads(() => send(source, [retry("k6", at + 8_000, "o-known")], at + 8_000))).toBe(1);
    expect(await m.incidents.incidentDetail(open.id, at + 8_000)).toMatchObject({ threadCount: 8 });
  });

  it("closes when every thread recovered", async () => {
    const source = await newSource("fleet-b");
    const at = T + 60 * 60_000;
    await send(source, ["r1", "r2", "r3"].map((id, i) => retry(id, at + i * 1000, "o9")), at + 3_000);
    const [open] = (await m.incidents.listIncidents("open", at + 3_000)).incidents.filter((i) => i.model === "o9");
    expect(open.threadCount).toBe(3);
    await send(source, ["r1", "r2", "r3"].map((id, i) => ({ threadId: id, type: "progress", turnId: "u1", at: new Date(at + 30_000 + i).toISOString() })), at + 31_000);
    expect(await m.incidents.incidentDetail(open.id, at + 40_000)).toMatchObject({ state: "closed", closedBy: "recovered" });
  });
});
