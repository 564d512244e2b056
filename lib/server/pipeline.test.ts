import { beforeAll, describe, expect, it } from "vitest";
import type { NormalizedLine } from "@/lib/ingest/types";
import type { NormalizedEvent } from "@/lib/ingest/types";
import { normalizedLines, useFreshDatabase } from "@/e2e/support/in-process";

/**
 * The data path (normalized lines → reduce → persist) in process, on a real SQLite file: the
 * rules that live between the engine and the database.
 */
useFreshDatabase("pipeline");
process.env.RADAR_STOP_GRACE_MS = "60000";

type Modules = {
  pipeline: typeof import("./pipeline");
  sources: typeof import("@/lib/db/sources");
  tokens: typeof import("./tokens");
  client: typeof import("@/lib/db/client");
  bus: typeof import("./bus");
};
let m: Modules;
beforeAll(async () => {
  m = {
    pipeline: await import("./pipeline"),
    sources: await import("@/lib/db/sources"),
    tokens: await import("./tokens"),
    client: await import("@/lib/db/client"),
    bus: await import("./bus"),
  };
});

const T0 = Date.now() - 60_000;
const lines = (events: Partial<NormalizedEvent>[]): NormalizedLine[] => normalizedLines(events, { receivedAt: T0, base: { at: T0, threadId: "t" } });
const sql = () => m.client.db().sql;
const threadRow = (sourceId: string, id: string) =>
  sql().prepare(`SELECT id, status FROM "Thread" WHERE sourceId = ? AND externalId = ?`).get(sourceId, id) as { id: number; status: string };
const directivesOf = (threadKey: number) =>
  sql().prepare(`SELECT kind, state, origin FROM "Directive" WHERE threadId = ?`).all(threadKey) as { kind: string; state: string; origin: string }[];

describe("the ingestion pipeline", () => {
  it("keeps two sources' threads with the same agent id apart, directives included", async () => {
    const a = await m.tokens.createSource("a", `rr_a_${Date.now()}`);
    const b = await m.tokens.createSource("b", `rr_b_${Date.now()}`);
    const stall = [
      { threadId: "shared", type: "turn.started" as const, turnId: "u1", at: T0 },
      { threadId: "shared", type: "retry" as const, turnId: "u1", at: T0, attempt: 1, error: { httpStatus: 429 } },
    ];
    await m.pipeline.ingestLines(a, lines(stall), T0);
    await m.pipeline.ingestLines(b, lines(stall), T0);
    const later = T0 + 100_000; // past the deadline (notice + 65 s), inside the stop grace
    await m.pipeline.tickThreads([threadRow(a.id, "shared").id, threadRow(b.id, "shared").id], later);
    for (const source of [a, b]) {
      const row = threadRow(source.id, "shared");
      expect(row.status).toBe("exhausted");
      expect(directivesOf(row.id)).toEqual([{ kind: "interrupt", state: "pending", origin: "policy" }]);
    }
  });

  it("sends the interrupt of a deadline that passed while the server was down, however long ago", async () => {
    const s = await m.tokens.createSource("downtime", `rr_d_${Date.now()}`);
    const old = Date.now() - 3 * 3_600_000;
    await m.pipeline.ingestLines(s, lines([
      { threadId: "slept", type: "turn.started", turnId: "u1", at: old },
      { threadId: "slept", type: "retry", turnId: "u1", at: old, attempt: 1, error: { httpStatus: 429 } },
    ]), old + 1000);
    const row = threadRow(s.id, "slept");
    await m.pipeline.tickThreads([row.id]);
    expect(directivesOf(row.id)).toEqual([{ kind: "interrupt", state: "pending", origin: "policy" }]);
  });

  it("records directives of an imported, long-past incident as expired instead of sending them", async () => {
    const s = await m.tokens.createSource("import", `rr_i_${Date.now()}`);
    const old = Date.now() - 3 * 3_600_000;
    await m.pipeline.ingestLines(s, lines([
      { threadId: "history", type: "turn.started", turnId: "u1", at: old },
      { threadId: "history", type: "retry", turnId: "u1", at: old, attempt: 1, error: { httpStatus: 429 } },
      { threadId: "history", type: "progress", turnId: "u1", at: old + 3_600_000 },
    ]));
    expect(directivesOf(threadRow(s.id, "history").id)).toEqual([{ kind: "interrupt", state: "expired", origin: "policy" }]);
  });

  it("folds progress only in order, so a late event's replay keeps the thread recovered", async () => {
    const s = await m.tokens.createSource("fold", `rr_f_${Date.now()}`);
    const send = (events: Partial<NormalizedEvent>[]) => m.pipeline.ingestLines(s, lines(events.map((e) => ({ threadId: "f", turnId: "u1", ...e }))), T0 + 10_000);
    await send([{ type: "turn.started", at: T0 }]);
    await send([{ type: "retry", at: T0 + 1000, attempt: 1, error: { httpStatus: 429 } }]);
    await send([{ type: "progress", at: T0 + 500 }]);
    await send([{ type: "progress", at: T0 + 3000 }]);
    expect(threadRow(s.id, "f").status).toBe("recovered");
    await send([{ type: "progress", at: T0 + 200 }]);
    expect(threadRow(s.id, "f").status).toBe("recovered");
  });

  it("cascades a parent's stop to a subagent reported in the same request", async () => {
    const s = await m.tokens.createSource("lineage", `rr_l_${Date.now()}`);
    await m.pipeline.ingestLines(s, lines([
      { threadId: "parent", type: "turn.started", turnId: "p1", at: T0 },
      { threadId: "child", type: "turn.started", turnId: "c1", at: T0, parentThreadId: "parent" },
      { threadId: "parent", type: "retry", turnId: "p1", at: T0 + 1, attempt: 6, maxAttempts: 5, policy: "codex-429-stall-bound", error: { httpStatus: 429 } },
    ]), T0 + 2);
    expect(threadRow(s.id, "parent").status).toBe("exhausted");
    expect(threadRow(s.id, "child").status).toBe("stopping");
  });

  it("replays from the settings a thread started with, not today's", async () => {
    const s = await m.tokens.createSource("settings", `rr_s_${Date.now()}`);
    const failure = { code: "serverOverloaded", message: "Selected model is at capacity." };
    await m.pipeline.ingestLines(s, lines([
      { threadId: "cap", type: "turn.started", turnId: "u1", at: T0 },
      { threadId: "cap", type: "turn.failed", turnId: "u1", at: T0 + 1000, error: failure },
    ]), T0 + 2000);
    expect(threadRow(s.id, "cap").status).toBe("failed");
    await m.sources.updateSourceSettings(s.id, { capacityRecovery: true });
    await m.pipeline.applySourceSettings((await m.sources.getSource(s.id))!, T0 + 2500);
    // A late line forces a replay of the whole thread.
    await m.pipeline.ingestLines((await m.sources.getSource(s.id))!, lines([{ threadId: "cap", type: "progress", turnId: "u1", at: T0 + 500 }]), T0 + 3000);
    expect(threadRow(s.id, "cap").status).toBe("failed");
  });

  it("a stop that cancels a scheduled capacity recovery counts as a stop", async () => {
    const { stopThreads } = await import("./stop");
    const s = await m.tokens.createSource("recovery", `rr_r_${Date.now()}`);
    await m.sources.updateSourceSettings(s.id, { capacityRecovery: true });
    const failure = { code: "serverOverloaded", message: "Selected model is at capacity." };
    const now = Date.now();
    await m.pipeline.ingestLines((await m.sources.getSource(s.id))!, lines([
      { threadId: "rec", type: "turn.started", turnId: "u1", at: now },
      { threadId: "rec", type: "turn.failed", turnId: "u1", at: now, error: failure },
    ]), now);
    const row = threadRow(s.id, "rec");
    expect(row.status).toBe("recovery_scheduled");
    const [result] = await stopThreads([row.id], { actor: "test" }, "enough");
    expect(result).toMatchObject({ result: "stopping" });
  });
});

describe("the cost of an event", () => {
  // Under Next's AsyncLocalStorage every promise runs a hook (see "Promises per event" in
  // pipeline.ts). What an event adds to its batch, past the batch's own promises (the
  // transaction, its threads, finish): the difference between a batch of 300 and one of 100
  // events of threads that exist, over the 200 more. A count, not a time: the same on any machine.
  it("adds at most 1 promise per event of a thread the batch already holds, when it meets no timer and no directive", async () => {
    const s = await m.tokens.createSource("promises", `rr_p_${Date.now()}`);
    const types = ["retry", "attempt", "progress", "retry", "attempt", "progress"] as const;
    const events = (base: number, count: number) =>
      Array.from({ length: count }, (_, i) => {
        const type = types[Math.floor(i / 5) % types.length];
        const retry = type === "retry" ? { attempt: 1, error: { httpStatus: 429, message: "Please try again in 2s." } } : {};
        return { threadId: `p-${i % 5}`, type, turnId: "u1", at: base + i, ...retry };
      });
    // The threads exist: the batches measured find them, as a busy source's batches do.
    const started = Array.from({ length: 5 }, (_, i) => ({ threadId: `p-${i}`, type: "turn.started" as const, turnId: "u1", at: T0 }));
    await m.pipeline.ingestLines(s, lines(started), T0);
    const { createHook } = await import("node:async_hooks");
    const promisesOf = async (batch: NormalizedLine[], now: number) => {
      let promises = 0;
      const hook = createHook({ init: (_id, type) => void (type === "PROMISE" && promises++) });
      hook.enable();
      try {
        await m.pipeline.ingestLines(s, batch, now);
      } finally {
        hook.disable();
      }
      return promises;
    };
    const small = await promisesOf(lines(events(T0 + 1, 100)), T0 + 1);
    const large = await promisesOf(lines(events(T0 + 1_000, 300)), T0 + 1_000);
    // 0.2 here; 4.2 while storing and applying an event still awaited SQLite's answers (the
    // batch of 100 then made 5.6 per event in all, 1.6 now).
    expect((large - small) / 200).toBeLessThanOrEqual(1);
  });
});

describe("a usage limit named to the minute takes the exact reset the source reported apart from it", () => {
  // An error 2 s before a minute begins names that minute; the window resets 4 s into it.
  const minute = Math.ceil(Date.now() / 60_000) * 60_000 + 60_000;
  const at = minute - 2_000;
  const exactReset = minute + 4_000;
  const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
  const refused = (reset: number) => ({ code: "usageLimitExceeded", message: `You've hit your usage limit. Try again at ${hhmm(reset)}.` });
  const limitsLine = (resetAt: number, window: { account?: string; threadId?: string } = {}): NormalizedLine => ({
    index: 0,
    event: null,
    nativeType: "account/rateLimits/updated",
    format: "codex",
    idempotencyKey: `limits-${resetAt}-${Math.random()}`,
    raw: {},
    receivedAt: at - 500,
    limits: [{ account: window.account ?? null, provider: "openai", window: "primary", usedPercent: 100, windowMinutes: 300, resetAt, status: "rejected", observedAt: at - 500, threadId: window.threadId ?? null }],
  });
  const failed = (threadId: string, reset: number, provider = "openai") =>
    normalizedLines([{ threadId, type: "turn.failed", turnId: "u1", at, provider, error: refused(reset) }], { receivedAt: at, base: { at, threadId } });
  const resetOf = (sourceId: string, id: string) =>
    (sql().prepare(`SELECT resetAt FROM "Thread" WHERE sourceId = ? AND externalId = ?`).get(sourceId, id) as { resetAt: number }).resetAt;

  it.each([
    ["reported in an earlier request", true],
    ["reported earlier in the same request", false],
  ])("%s", async (_name, apart) => {
    const s = await m.tokens.createSource(`minute-${apart}`, `rr_m_${apart}_${Date.now()}`);
    if (apart) {
      await m.pipeline.ingestLines(s, [limitsLine(exactReset)], at);
      await m.pipeline.ingestLines(s, failed("t", minute), at);
    } else {
      await m.pipeline.ingestLines(s, [limitsLine(exactReset), ...failed("t", minute)], at);
    }
    expect(threadRow(s.id, "t").status).toBe("waiting_reset");
    expect(resetOf(s.id, "t")).toBe(exactReset);
  });

  it("keeps the exact reset when a late event makes the thread replay", async () => {
    const s = await m.tokens.createSource("minute-replay", `rr_mr_${Date.now()}`);
    await m.pipeline.ingestLines(s, [limitsLine(exactReset)], at);
    await m.pipeline.ingestLines(s, failed("t", minute), at);
    await m.pipeline.ingestLines(s, normalizedLines([{ threadId: "t", type: "progress", turnId: "u1", at: at - 1_000 }], { receivedAt: at, base: { threadId: "t" } }), at);
    expect(resetOf(s.id, "t")).toBe(exactReset);
  });

  it("a window of another minute, of another source or of another provider leaves the text's minute alone", async () => {
    const other = await m.tokens.createSource("minute-other", `rr_mo_${Date.now()}`);
    await m.pipeline.ingestLines(other, [limitsLine(exactReset)], at);
    const s = await m.tokens.createSource("minute-far", `rr_mf_${Date.now()}`);
    await m.pipeline.ingestLines(s, [limitsLine(minute + 5 * 60_000)], at);
    await m.pipeline.ingestLines(s, failed("t", minute), at);
    expect(resetOf(s.id, "t")).toBe(minute);
    const p = await m.tokens.createSource("minute-provider", `rr_mp_${Date.now()}`);
    await m.pipeline.ingestLines(p, [limitsLine(exactReset)], at);
    await m.pipeline.ingestLines(p, failed("t", minute, "anthropic"), at);
    expect(resetOf(p.id, "t")).toBe(minute);
  });

  it("of several accounts' windows in that minute, the thread's own", async () => {
    const s = await m.tokens.createSource("minute-accounts", `rr_ma_${Date.now()}`);
    await m.pipeline.ingestLines(s, [limitsLine(exactReset, { account: "mine", threadId: "t" }), { ...limitsLine(minute + 30_000, { account: "other" }), index: 1 }], at);
    await m.pipeline.ingestLines(s, failed("t", minute), at);
    expect(resetOf(s.id, "t")).toBe(exactReset);
  });
});

describe("the first source's token", () => {
  it("stays revoked when RADAR_INGEST_TOKEN names a revoked token at the next start", async () => {
    const token = `rr_env_${Date.now()}`;
    await m.tokens.ensureDefaultSource(token);
    const id = sql().prepare(`SELECT id FROM "IngestToken" WHERE tokenHash = ?`).pluck().get(m.tokens.hashToken(token)) as string;
    await m.sources.revokeToken(id);
    await expect(m.tokens.ensureDefaultSource(token)).resolves.toBeDefined();
    expect(await m.tokens.sourceForToken(token)).toBeNull();
  });
});

describe("what the pipeline publishes (the live-update protocol)", () => {
  /** The changes one ingest publishes; the bus's coalescing window is closed first so it goes out at once. */
  async function published(source: Awaited<ReturnType<Modules["tokens"]["createSource"]>>, events: Partial<NormalizedEvent>[]) {
    // A busy machine may fire the window's timer late: wait until it has actually closed.
    while (m.bus.coalescing()) await new Promise((resolve) => setTimeout(resolve, m.bus.COALESCE_MS / 4));
    const seen: { key: number; reorder: boolean }[][] = [];
    const off = m.bus.subscribe("threads", (message) => seen.push(message.threads));
    await m.pipeline.ingestLines(source, lines(events), T0 + 5_000);
    off();
    return seen.flat();
  }
  it("marks a new thread and a changed status `reorder`, and a change within the same status not", async () => {
    const s = await m.tokens.createSource("live", `rr_l_${Date.now()}`);
    const key = () => threadRow(s.id, "live-1").id;
    expect(await published(s, [{ threadId: "live-1", type: "turn.started", turnId: "u1", at: T0 }])).toEqual([{ key: key(), reorder: true }]);
    expect(await published(s, [{ threadId: "live-1", type: "progress", turnId: "u1", at: T0 + 1_000 }])).toEqual([{ key: key(), reorder: false }]);
    expect(await published(s, [{ threadId: "live-1", type: "retry", turnId: "u1", at: T0 + 2_000, attempt: 1, error: { httpStatus: 429 } }])).toEqual([
      { key: key(), reorder: true },
    ]);
    expect(await published(s, [{ threadId: "live-1", type: "retry", turnId: "u1", at: T0 + 3_000, attempt: 2, error: { httpStatus: 429 } }])).toEqual([
      { key: key(), reorder: false },
    ]);
  });
});
