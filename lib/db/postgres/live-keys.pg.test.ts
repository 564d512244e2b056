import net from "node:net";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { PATIENCE_MS } from "@/e2e/support/patience";
import { freshDatabase } from "@/scripts/lib/postgres";
import { postgresClients } from "@/e2e/support/postgres-clients";
import { waitFor } from "@/e2e/support/relay-helpers";
import { decodeKeys, decodeNotice, encodeKeys, encodeNotice, publishKeys, publishNotice, subscribeKeys, type KeySubscription, type LiveKey, type LiveNotice } from "./live-keys";

/** Changed thread keys between instances on a real cluster: NOTIFY out, LISTEN in, resync after a drop. */
const { connect, end } = postgresClients();
const subscriptions: KeySubscription[] = [];

afterAll(async () => {
  await Promise.all(subscriptions.map((subscription) => subscription.close()));
  await end();
});

/**
 * A TCP path to the cluster that can go silent the way a NAT or balancer forgets an idle
 * connection: nothing passes any more either way, and neither end is told.
 */
async function forgetfulPath(url: string) {
  const target = new URL(url);
  const sockets: net.Socket[] = [];
  const server = net.createServer((inbound) => {
    const outbound = net.connect(Number(target.port), target.hostname);
    sockets.push(inbound, outbound);
    inbound.on("data", (chunk) => outbound.write(chunk));
    outbound.on("data", (chunk) => inbound.write(chunk));
    inbound.on("error", () => undefined).on("close", () => outbound.destroy());
    outbound.on("error", () => undefined).on("close", () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const proxied = new URL(url);
  proxied.port = String((server.address() as net.AddressInfo).port);
  return {
    url: proxied.toString(),
    /** From now on the connections open through it hear nothing; new ones work. */
    forget() {
      for (const socket of sockets.splice(0)) {
        socket.removeAllListeners("data");
        socket.on("data", () => undefined);
      }
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function listener(url: string, extra: { checkMs?: number; checkTimeoutMs?: number } = {}) {
  const received: LiveKey[] = [];
  const notices: { notice: LiveNotice; origin: string }[] = [];
  const origins = new Set<string>();
  let resyncs = 0;
  const subscription = subscribeKeys(
    url,
    (keys, origin) => {
      received.push(...keys);
      origins.add(origin);
    },
    () => resyncs++,
    { backoffMs: 20, onNotice: (notice, origin) => notices.push({ notice, origin }), ...extra },
  );
  subscriptions.push(subscription);
  return { subscription, received, notices, origins, resyncs: () => resyncs };
}

describe("live updates across instances (LISTEN/NOTIFY)", () => {
  it("chunks stay below PostgreSQL's payload limit and decode to the same keys", () => {
    const keys = Array.from({ length: 5_000 }, (_, i) => ({ key: 1_000_000 + i, reorder: i % 3 === 0 }));
    const payloads = encodeKeys("instance-a", keys);
    expect(payloads.length).toBeGreaterThan(1);
    for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThan(8_000);
    const decoded = payloads.map(decodeKeys);
    expect(decoded.every((chunk) => chunk.origin === "instance-a")).toBe(true);
    expect(decoded.flatMap((chunk) => chunk.keys)).toEqual(keys);
    expect(encodeKeys("a", [])).toEqual([]);
  });

  it("two subscribers on their own connections both get the keys a third connection publishes", async () => {
    const url = await freshDatabase(inject("postgresUrl"));
    const a = listener(url);
    const b = listener(url);
    await Promise.all([a.subscription.ready, b.subscription.ready]);
    const publisher = await connect(url);
    const keys = [
      { key: 7, reorder: true },
      { key: 8, reorder: false },
    ];
    await publishKeys(publisher, keys, "instance-c");
    await waitFor(() => a.received.length === 2 && b.received.length === 2, PATIENCE_MS);
    expect(a.received).toEqual(keys);
    expect(b.received).toEqual(keys);
    expect([...a.origins]).toEqual(["instance-c"]);
  });

  it("5,000 keys arrive complete, across chunks, and only once their transaction commits", async () => {
    const url = await freshDatabase(inject("postgresUrl"));
    const a = listener(url);
    await a.subscription.ready;
    const publisher = await connect(url);
    const keys = Array.from({ length: 5_000 }, (_, i) => ({ key: i + 1, reorder: i % 2 === 0 }));
    await publisher.query("BEGIN");
    await publishKeys(publisher, keys);
    await publisher.query("ROLLBACK");
    await publisher.query("BEGIN");
    await publishKeys(publisher, keys);
    await publisher.query("COMMIT");
    await waitFor(() => a.received.length >= keys.length, PATIENCE_MS, () => `received ${a.received.length}`);
    // The rolled-back publication never arrives: the committed one is all there is, in order.
    await publishKeys(publisher, [{ key: -1, reorder: false }]);
    await waitFor(() => a.received.at(-1)?.key === -1, PATIENCE_MS);
    expect(a.received.slice(0, -1)).toEqual(keys);
  });

  it("notices (directives for a source, usage windows, incidents) travel on the same connection, with their origin", async () => {
    const sent: LiveNotice[] = [{ type: "directives", sourceId: "src;1" }, { type: "limits" }, { type: "incidents" }];
    expect(sent.map((notice) => decodeNotice(encodeNotice("a", notice)))).toEqual(sent.map((notice) => ({ origin: "a", notice })));
    expect(decodeNotice("a;nonsense")).toBeNull();
    const url = await freshDatabase(inject("postgresUrl"));
    const a = listener(url);
    await a.subscription.ready;
    const publisher = await connect(url);
    for (const notice of sent) await publishNotice(publisher, notice, "instance-b");
    await waitFor(() => a.notices.length === 3, PATIENCE_MS);
    expect(a.notices).toEqual(sent.map((notice) => ({ notice, origin: "instance-b" })));
    expect(a.received).toEqual([]);
  });

  it("a subscriber whose connection is killed reconnects, asks for a resync, and hears later keys", async () => {
    const url = await freshDatabase(inject("postgresUrl"));
    const a = listener(url);
    await a.subscription.ready;
    const admin = await connect(url);
    const killed = await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'radar-live-keys' AND datname = current_database()`,
    );
    expect(killed.rowCount).toBe(1);
    await waitFor(() => a.resyncs() === 1, PATIENCE_MS);
    await publishKeys(admin, [{ key: 99, reorder: false }]);
    await waitFor(() => a.received.length === 1, PATIENCE_MS);
    expect(a.received).toEqual([{ key: 99, reorder: false }]);
    expect(a.resyncs()).toBe(1);
  });

  it("a subscriber whose connection goes silent (no error, no end) notices at its check, reconnects and asks for a resync", async () => {
    const url = await freshDatabase(inject("postgresUrl"));
    const path = await forgetfulPath(url);
    try {
      const a = listener(path.url, { checkMs: 100, checkTimeoutMs: 200 });
      await a.subscription.ready;
      const publisher = await connect(url);
      await publishKeys(publisher, [{ key: 1, reorder: false }]);
      await waitFor(() => a.received.length === 1, PATIENCE_MS);
      path.forget();
      // Sent while the path is silent: lost, hence the resync.
      await publishKeys(publisher, [{ key: 2, reorder: false }]);
      await waitFor(() => a.resyncs() === 1, PATIENCE_MS);
      await publishKeys(publisher, [{ key: 3, reorder: false }]);
      await waitFor(() => a.received.some(({ key }) => key === 3), PATIENCE_MS);
      expect(a.received.map(({ key }) => key)).toEqual([1, 3]);
    } finally {
      await path.close();
    }
  });

  it("the dedicated connections' settings (DEAD_PEER_SETTINGS) are accepted and take effect", async () => {
    const url = await freshDatabase(inject("postgresUrl"));
    // A session's settings are its own: read them on a connection set the same way.
    const probe = new pg.Client({ connectionString: url });
    await probe.connect();
    try {
      await probe.query((await import("./dedicated")).DEAD_PEER_SETTINGS);
      const shown = await probe.query<{ setting: string; name: string }>(
        `SELECT name, setting FROM pg_settings WHERE name IN ('tcp_keepalives_idle', 'tcp_user_timeout') ORDER BY name`,
      );
      expect(shown.rows).toEqual([
        { name: "tcp_keepalives_idle", setting: "5" },
        { name: "tcp_user_timeout", setting: "8000" },
      ]);
    } finally {
      await probe.end();
    }
  });
});
