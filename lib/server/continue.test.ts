import { beforeAll, describe, expect, it } from "vitest";
import type { NormalizedEvent, NormalizedLine } from "@/lib/ingest/types";
import { normalizedLines, useFreshDatabase } from "@/e2e/support/in-process";

/**
 * What the server asks of a source on the engine's initiative and on an operator's, in process on
 * a real SQLite file: nothing a source cannot carry out, and Resume now / archive audited.
 */
useFreshDatabase("continue");

type Modules = {
  pipeline: typeof import("./pipeline");
  sources: typeof import("@/lib/db/sources");
  tokens: typeof import("./tokens");
  client: typeof import("@/lib/db/client");
  continue: typeof import("./continue");
  archive: typeof import("./archive");
};
let m: Modules;
beforeAll(async () => {
  m = {
    pipeline: await import("./pipeline"),
    sources: await import("@/lib/db/sources"),
    tokens: await import("./tokens"),
    client: await import("@/lib/db/client"),
    continue: await import("./continue"),
    archive: await import("./archive"),
  };
});

const T0 = Date.now() - 60_000;
const lines = (events: Partial<NormalizedEvent>[]): NormalizedLine[] => normalizedLines(events, { receivedAt: T0, base: { at: T0, threadId: "t" } });
const sql = () => m.client.db().sql;
const threadKey = (sourceId: string, id: string) => (sql().prepare(`SELECT id FROM "Thread" WHERE sourceId = ? AND externalId = ?`).get(sourceId, id) as { id: number }).id;
const directivesOf = (key: number) => sql().prepare(`SELECT kind, origin FROM "Directive" WHERE threadId = ?`).all(key) as { kind: string; origin: string }[];
const auditOf = (target: string) => sql().prepare(`SELECT action, result FROM "AuditEntry" WHERE target = ? ORDER BY id`).all(target);
const operator = { actor: "alice@example.test" };

const exhausted = (threadId: string) => [
  { threadId, type: "turn.started" as const, turnId: "u1", at: T0 },
  { threadId, type: "retry" as const, turnId: "u1", at: T0, attempt: 9, maxAttempts: 5, error: { httpStatus: 429 } },
];

describe("nothing a source cannot carry out", () => {
  it("a policy bound on a thread reported only by OpenTelemetry sends no interrupt, and Resume now is refused", async () => {
    const source = await m.tokens.createSource("otlp-only", `rr_otlp_${Date.now()}`);
    await m.pipeline.ingestLines(source, [], T0, { otlp: true }); // an OpenTelemetry export heard from
    await m.pipeline.ingestLines(source, lines(exhausted("o1")), T0);
    const key = threadKey(source.id, "o1");
    expect(directivesOf(key)).toEqual([]);
    const refused = await m.continue.continueThread("resume", key, operator, undefined);
    expect(refused).toMatchObject({ result: "unreachable", detail: expect.stringContaining("OpenTelemetry") });
    expect(directivesOf(key)).toEqual([]);
    expect(auditOf("o1")).toEqual([{ action: "resume", result: "unreachable" }]);
  });

  it("a relay that announced it can interrupt and continue gets the policy interrupt, then Resume now's continue", async () => {
    const source = await m.tokens.createSource("relay", `rr_relay_${Date.now()}`);
    await m.sources.recordPoll(source.id, "interrupt,continue", T0);
    await m.pipeline.ingestLines(source, lines(exhausted("r1")), T0);
    const key = threadKey(source.id, "r1");
    expect(directivesOf(key)).toEqual([{ kind: "interrupt", origin: "policy" }]);
    expect(await m.continue.continueThread("resume", key, operator, undefined)).toMatchObject({ result: "sent", status: "recovery_scheduled" });
    expect(directivesOf(key)).toEqual([
      { kind: "interrupt", origin: "policy" },
      { kind: "continue", origin: "operator" },
    ]);
    expect(auditOf("r1")).toEqual([{ action: "resume", result: "sent" }]);
  });
});

describe("archive", () => {
  it("hides nothing it cannot find, and is undone by unarchive, each audited", async () => {
    const source = await m.tokens.createSource("archive", `rr_arch_${Date.now()}`);
    await m.pipeline.ingestLines(source, lines([{ threadId: "a1", type: "turn.started", turnId: "u1", at: T0 }]), T0);
    const key = threadKey(source.id, "a1");
    expect(await m.archive.changeVisibility(key, { archive: true }, operator)).toMatchObject({ result: "archived", threadId: "a1" });
    expect(sql().prepare(`SELECT archivedAt IS NOT NULL AS archived FROM "Thread" WHERE id = ?`).get(key)).toEqual({ archived: 1 });
    expect(await m.archive.changeVisibility(key, { archive: false }, operator)).toMatchObject({ result: "unarchived" });
    expect(await m.archive.changeVisibility(999_999, { archive: true }, operator)).toMatchObject({ result: "not-found" });
    expect(auditOf("a1")).toEqual([
      { action: "archive", result: "archived" },
      { action: "unarchive", result: "unarchived" },
    ]);
  });
});
