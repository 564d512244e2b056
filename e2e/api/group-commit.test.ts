import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post, queryDatabase, startServer, type RunningServer } from "../support/server";

/**
 * Single-event POSTs arriving together share units of work on the server (group commit,
 * lib/db/unit-of-work.ts). Over HTTP against the built app: every one lands and is answered with
 * its own result, a bad one among them is refused alone, and a resend inside the crowd is stored once.
 */
let server: RunningServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

/** The keys of `keys` the server stored, once each. */
const stored = async (keys: string[]) => {
  // A progress event folded into the one before it keeps its key in the key ledger.
  const list = keys.map(() => "?").join(", ");
  const text = `SELECT "idempotencyKey" AS key FROM "Event" WHERE "idempotencyKey" IN (${list})
    UNION ALL SELECT key FROM "IngestKey" WHERE key IN (${list})`;
  return (await queryDatabase<{ key: string }>(server, text, [...keys, ...keys])).map((row) => row.key);
};

describe("single-event POSTs arriving together", () => {
  it("all land, each answered with its own result; bad ones are refused alone; a resend is stored once", async () => {
    const run = `group-${Date.now().toString(36)}`;
    const at = Date.now() - 60_000;
    const events = Array.from({ length: 40 }, (_, i) => ({
      id: `${run}-${i}`,
      threadId: `${run}-thread-${i % 8}`,
      type: i < 8 ? "turn.started" : "progress",
      turnId: "turn-1",
      at: at + i,
      agent: "codex",
    }));
    const answers = await Promise.all([
      ...events.map((event) => post(server, "/api/v1/events", event)),
      post(server, "/api/v1/events", "{ not json"),
      post(server, "/api/v1/events", { id: `${run}-typeless`, threadId: `${run}-thread-0`, at }),
      post(server, "/api/v1/events", events[5]),
    ]);
    const [malformed, typeless, resend] = answers.slice(events.length);
    const original = answers[5];

    for (const [i, answer] of answers.slice(0, events.length).entries()) {
      if (i === 5) continue;
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toMatchObject({ accepted: 1, duplicates: 0, rejected: [] });
    }
    expect(malformed.status).toBe(400);
    expect(typeless.status).toBe(422);
    expect(typeless.body).toMatchObject({ accepted: 0 });
    // Whichever of the two came first stored the event; the other was told it is a duplicate.
    expect([original, resend].map((answer) => answer.status)).toEqual([200, 200]);
    expect([original.body.accepted, resend.body.accepted].sort()).toEqual([0, 1]);
    expect(original.body.duplicates + resend.body.duplicates).toBe(1);

    expect((await stored(events.map((event) => event.id))).sort()).toEqual(events.map((event) => event.id).sort());
    expect(await stored([`${run}-typeless`])).toEqual([]);
  });
});
