import { beforeAll, describe, expect, it } from "vitest";
import { STORES, useStore } from "@/e2e/support/both-stores";
import { recordSignInFailure } from "./sign-in-guard";
import {
  countOtherAdmins, countPeople, endSession, endSessions, listPeople, peopleOverview, personByEmail, personById, setDisabled, setRole,
} from "./people";
import { storePrisma } from "./store-prisma";

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

describe.each(STORES)("people on %s", (store) => {
  useStore(store);

  beforeAll(async () => {
    const { prisma } = storePrisma();
    const person = (id: string, email: string, role: string, at: number) =>
      prisma.user.create({ data: { id, name: id.toUpperCase(), email, role, createdAt: new Date(at), updatedAt: new Date(at) } });
    await person("ada", "ada@example.com", "admin", T0);
    await person("bob", "bob@example.com", "operator", T0 + 1);
    await person("cy", "cy@example.com", "viewer", T0 + 2);
    const session = (id: string, userId: string) =>
      prisma.session.create({ data: { id, token: `token-${id}`, userId, expiresAt: new Date(T0 + 86_400_000), createdAt: new Date(T0), updatedAt: new Date(T0) } });
    await Promise.all([session("s1", "bob"), session("s2", "bob"), session("s3", "cy"), session("s4", "cy")]);
    await prisma.apiKey.create({ data: { id: "k1", name: "bob's", role: "operator", keyHash: "h1", prefix: "rr_1", ownerId: "bob", createdAt: new Date(T0) } });
  });

  it("reads people by id and by email (any case), with times in epoch ms", async () => {
    expect(await countPeople()).toBe(3);
    expect(await personById("ada")).toEqual({ id: "ada", name: "ADA", email: "ada@example.com", role: "admin", disabled: false, createdAt: T0 });
    expect((await personByEmail("BOB@example.com"))?.id).toBe("bob");
    expect(await personById("nobody")).toBeNull();
    expect(await personByEmail("nobody@example.com")).toBeNull();
    expect((await listPeople()).map((p) => p.email)).toEqual(["ada@example.com", "bob@example.com", "cy@example.com"]);
  });

  it("changes roles, and counts the other admins who can still sign in", async () => {
    expect(await countOtherAdmins("ada")).toBe(0);
    expect(await setRole("bob", "admin", T0 + 10)).toBe(true);
    expect(await setRole("nobody", "admin")).toBe(false);
    expect(await countOtherAdmins("ada")).toBe(1);
    expect((await personById("bob"))?.role).toBe("admin");
  });

  it("disabling ends every session and revokes the person's keys; enabling gives nothing back", async () => {
    expect(await setDisabled("bob", true, T0 + 20)).toBe(true);
    expect((await personById("bob"))?.disabled).toBe(true);
    expect(await countOtherAdmins("ada")).toBe(0);
    const { prisma } = storePrisma();
    expect(await prisma.session.count({ where: { userId: "bob" } })).toBe(0);
    expect((await prisma.apiKey.findUnique({ where: { id: "k1" } }))?.revokedAt?.getTime()).toBe(T0 + 20);
    expect(await setDisabled("bob", false, T0 + 30)).toBe(true);
    expect((await personById("bob"))?.disabled).toBe(false);
    expect((await prisma.apiKey.findUnique({ where: { id: "k1" } }))?.revokedAt?.getTime()).toBe(T0 + 20);
    expect(await setDisabled("nobody", true)).toBe(false);
  });

  it("ends one session, or all of a person's", async () => {
    await endSession("s3");
    expect(await endSessions("cy")).toBe(1);
    expect(await endSessions("cy")).toBe(0);
  });

  it("gives the People page everyone with their failed sign-ins in the window and a lockout still running", async () => {
    for (let i = 0; i < 10; i++) await recordSignInFailure({ email: "cy@example.com", address: "10.0.0.1", at: T0 + 100 + i }, 0);
    await recordSignInFailure({ email: "ada@example.com", address: "10.0.0.1", at: T0 + 300 }, 0);
    const overview = await peopleOverview(T0 + 1_000);
    expect(overview.map(({ email, createdAt, failures, lockedUntil }) => ({ email, createdAt, failures, lockedUntil }))).toEqual([
      { email: "ada@example.com", createdAt: new Date(T0).toISOString(), failures: 1, lockedUntil: null },
      { email: "bob@example.com", createdAt: new Date(T0 + 1).toISOString(), failures: 0, lockedUntil: null },
      { email: "cy@example.com", createdAt: new Date(T0 + 2).toISOString(), failures: 10, lockedUntil: new Date(T0 + 60_109).toISOString() },
    ]);
    expect((await peopleOverview(T0 + 60_109)).find((p) => p.email === "cy@example.com")).toMatchObject({ failures: 10, lockedUntil: null });
    // Past the window the failures are forgotten.
    expect((await peopleOverview(T0 + 15 * 60_000 + 110)).find((p) => p.email === "cy@example.com")).toMatchObject({ failures: 0, lockedUntil: null });
  });
});
