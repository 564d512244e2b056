import { beforeAll, describe, expect, it } from "vitest";
import { STORES, useStore } from "@/e2e/support/both-stores";
import { apiKeyOverviews, insertApiKey, keyHolder, listApiKeys, revokeApiKeys } from "./api-keys";
import { setDisabled } from "./people";
import { storePrisma } from "./store-prisma";

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const key = (id: string, name: string, ownerId: string | null) => ({ id, name, role: "operator" as const, keyHash: `hash-${id}`, prefix: `rr_${id}`, ownerId });

describe.each(STORES)("API keys on %s", (store) => {
  useStore(store);

  beforeAll(async () => {
    const { prisma } = storePrisma();
    await prisma.user.create({ data: { id: "ada", name: "Ada", email: "ada@example.com", role: "viewer", createdAt: new Date(T0), updatedAt: new Date(T0) } });
    await insertApiKey(key("k1", "ci", null), T0);
    await insertApiKey(key("k2", "laptop", "ada"), T0 + 1);
    await insertApiKey(key("k3", "ci", null), T0 + 2);
  });

  it("lists keys newest first with their owner, by owner too", async () => {
    expect(await listApiKeys()).toEqual([
      { id: "k3", name: "ci", role: "operator", prefix: "rr_k3", ownerId: null, ownerEmail: null, createdAt: T0 + 2, lastUsedAt: null, revokedAt: null },
      { id: "k2", name: "laptop", role: "operator", prefix: "rr_k2", ownerId: "ada", ownerEmail: "ada@example.com", createdAt: T0 + 1, lastUsedAt: null, revokedAt: null },
      { id: "k1", name: "ci", role: "operator", prefix: "rr_k1", ownerId: null, ownerEmail: null, createdAt: T0, lastUsedAt: null, revokedAt: null },
    ]);
    expect((await listApiKeys("ada")).map((k) => k.id)).toEqual(["k2"]);
  });

  it("resolves a presented key with its owner's standing, and records its use at most once a minute", async () => {
    expect(await keyHolder("hash-k2", T0 + 1_000)).toEqual({
      id: "k2", name: "laptop", role: "operator", ownerId: "ada", ownerEmail: "ada@example.com", ownerRole: "viewer", ownerDisabled: false,
    });
    expect(await keyHolder("hash-nope")).toBeNull();
    const lastUsed = async () => (await listApiKeys("ada"))[0].lastUsedAt;
    await expect.poll(lastUsed).toBe(T0 + 1_000);
    await keyHolder("hash-k2", T0 + 30_000);
    await keyHolder("hash-k2", T0 + 61_000);
    await expect.poll(lastUsed).toBe(T0 + 61_000);
    expect((await keyHolder("hash-k1", T0))?.ownerRole).toBeNull();
  });

  it("revokes by name or id, once, live keys last in the list", async () => {
    const revoked = await revokeApiKeys({ name: "ci" }, T0 + 5_000);
    expect(revoked.map((k) => [k.id, k.revokedAt]).sort()).toEqual([["k1", T0 + 5_000], ["k3", T0 + 5_000]]);
    expect(await revokeApiKeys({ name: "ci" }, T0 + 6_000)).toEqual([]);
    expect(await keyHolder("hash-k1")).toBeNull();
    expect((await listApiKeys()).map((k) => k.id)).toEqual(["k2", "k3", "k1"]);
    expect((await apiKeyOverviews()).map((k) => k.revokedAt)).toEqual([null, new Date(T0 + 5_000).toISOString(), new Date(T0 + 5_000).toISOString()]);
  });

  it("disabling the owner revokes their keys", async () => {
    await setDisabled("ada", true, T0 + 9_000);
    expect(await keyHolder("hash-k2")).toBeNull();
    expect((await revokeApiKeys({ id: "k2" }))).toEqual([]);
  });
});
