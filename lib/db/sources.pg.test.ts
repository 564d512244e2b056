import { describe, expect, it } from "vitest";
import { STORES, useStore } from "@/e2e/support/both-stores";
import {
  addToken, countNewEvents, createSource, firstSource, getSource, listSourceOverviews, recordPoll, revokeToken, sourceForTokenHash,
  sourceUsage, threadControls, tokenStatus, updateSourceSettings,
} from "./sources";
import { storePrisma } from "./store-prisma";

/** Sources' reads answer the same on both stores (their writes: store-writes.pg.test.ts). */
const T0 = Date.UTC(2026, 10, 21, 9, 0, 0);
const TOKEN = { tokenHash: "hash-1", prefix: "rr_1", label: "first" };

describe.each(STORES)("sources' reads on %s", (store) => {
  useStore(store);

  it("finds no source on an empty database, and an unknown token as unknown", async () => {
    expect(await firstSource()).toBeNull();
    expect(await tokenStatus("hash-none")).toBe("unknown");
    expect(await sourceForTokenHash("hash-none")).toBeNull();
    expect(await getSource("none")).toBeNull();
    expect(await sourceUsage("none")).toEqual({ events: 0, bytes: 0 });
    expect(await listSourceOverviews()).toEqual([]);
  });

  it("finds sources by id, by token and first created, with their settings; a revoked token finds none", async () => {
    const laptop = await createSource("laptop", TOKEN, T0);
    const ci = await createSource("ci", { ...TOKEN, tokenHash: "hash-2" }, T0 + 1);
    await updateSourceSettings(ci.id, { policy: "patient", capacityRecovery: true, resumeAtReset: true, incidents: { incidentMinThreads: 4, incidentWindowMs: 60_000 } });
    expect(await firstSource()).toEqual(laptop);
    const ciSettled = { id: ci.id, name: "ci", policy: "patient", capacityRecovery: true, resumeAtReset: true, incidentMinThreads: 4, incidentWindowMs: 60_000 };
    expect(await getSource(ci.id)).toEqual(ciSettled);
    expect(await sourceForTokenHash("hash-2")).toEqual(ciSettled);
    expect(await tokenStatus("hash-2")).toBe("active");

    const second = await addToken(laptop.id, { tokenHash: "hash-3", prefix: "rr_3", label: null }, T0 + 2);
    expect(await sourceForTokenHash("hash-3")).toEqual(laptop);
    expect(await revokeToken(second, T0 + 3)).toBe(true);
    expect(await tokenStatus("hash-3")).toBe("revoked");
    expect(await sourceForTokenHash("hash-3")).toBeNull();
  });

  it("lists every source with its usage, threads and tokens; tells each thread's controls by key", async () => {
    const laptop = (await firstSource())!;
    const { prisma } = storePrisma();
    const thread = await prisma.thread.create({
      data: { sourceId: laptop.id, externalId: "t-1", status: "idle", state: "{}", createdAt: new Date(T0), updatedAt: new Date(T0) },
    });
    await prisma.event.create({
      data: { sourceId: laptop.id, threadId: thread.id, idempotencyKey: "e-1", format: "canonical", type: "x", at: new Date(T0), receivedAt: new Date(T0), raw: "raw", normalized: "{}" },
    });
    expect(await countNewEvents(10)).toBe(false);
    expect(await sourceUsage(laptop.id)).toEqual({ events: 1, bytes: "raw".length + "{}".length });

    await recordPoll(laptop.id, "interrupt,continue", T0 + 5);
    const controls = await threadControls([thread.id, 999_999]);
    expect([...controls.keys()]).toEqual([thread.id]);
    expect(controls.get(thread.id)).toMatchObject({ threadId: "t-1" });

    const overviews = await listSourceOverviews();
    expect(overviews.map((s) => s.name)).toEqual(["laptop", "ci"]);
    expect(overviews[0]).toMatchObject({
      id: laptop.id, createdAt: new Date(T0).toISOString(), lastSeenAt: null, lastOtlpAt: null, events: 1, bytes: 5, threads: 1,
    });
    expect(overviews[0].tokens).toEqual([
      { id: expect.any(String), prefix: "rr_1", label: "first", createdAt: new Date(T0).toISOString(), revokedAt: null },
      { id: expect.any(String), prefix: "rr_3", label: null, createdAt: new Date(T0 + 2).toISOString(), revokedAt: new Date(T0 + 3).toISOString() },
    ]);
    expect(overviews[1]).toMatchObject({ policy: "patient", capacityRecovery: true, events: 0, bytes: 0, threads: 0 });
  });
});

describe("usage counting on postgres, with ids drawn before their transaction commits", () => {
  useStore("postgres");

  it("counts an event whose lower id commits after a higher one", async () => {
    const { pool } = await import("./postgres/pool");
    const { timestampFromMs } = await import("./postgres/time");
    const source = await createSource("late", TOKEN, T0);
    const insert = `INSERT INTO "Event" (id, "sourceId", "idempotencyKey", format, type, at, "receivedAt", raw, normalized)
      VALUES ($1, $2, $3, 'canonical', 'x', ${timestampFromMs("$4")}, ${timestampFromMs("$4")}, 'raw', '{}')`;
    const nextId = `SELECT nextval(pg_get_serial_sequence('"Event"', 'id'))::int AS id`;
    // A second connection (as another instance would) draws the lower id and holds its transaction open.
    const slow = await pool().connect();
    try {
      await slow.query("BEGIN");
      const lower = (await slow.query<{ id: number }>(nextId)).rows[0].id;
      const higher = (await pool().query<{ id: number }>(nextId)).rows[0].id;
      expect(higher).toBeGreaterThan(lower);
      await pool().query(insert, [higher, source.id, "higher", T0]);
      // The lower id is not final yet: nothing past it is counted.
      expect(await countNewEvents(10)).toBe(false);
      expect(await sourceUsage(source.id)).toEqual({ events: 0, bytes: 0 });
      await slow.query(insert, [lower, source.id, "lower", T0]);
      await slow.query("COMMIT");
    } finally {
      slow.release();
    }
    expect(await countNewEvents(10)).toBe(false);
    expect(await sourceUsage(source.id)).toEqual({ events: 2, bytes: 2 * ("raw".length + "{}".length) });
  });
});
