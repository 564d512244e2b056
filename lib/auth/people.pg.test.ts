import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORES, useStore } from "@/e2e/support/both-stores";
import { personByEmail, listPeople, peopleOverview, lockedAddresses } from "@/lib/db/people";
import { readSetting } from "@/lib/db/settings";
import { pool } from "@/lib/db/postgres/pool";
import { storePrisma } from "@/lib/db/store-prisma";
import { auth } from "./better-auth";
import { KNOWN_DEVICE_COOKIE } from "./known-device";
import { completeSetup, createPerson, newSetupLink, PersonError, setupCodeValid, signIn, unlock, unlockAddress } from "./people";

/**
 * Signing in with throttling that forgets, on both stores, by an injected clock: failures count
 * in a sliding window, a wait is capped at minutes, the right password after it works, someone
 * else's failures elsewhere do not hold a person back, and an admin clears an account or an
 * address. Then the setup link: it never makes an admin once one exists.
 */
const T0 = Date.UTC(2026, 11, 11, 9, 0, 0);
const MIN = 60_000;
const PASSWORD = "correct horse battery";

const attempt = (email: string, password: string, address: string, now: number) => signIn({ email, password, address, headers: new Headers() }, now);
/** The wait a refusal names ("locked for 1 h 4 min"), in ms; 0 when it names none. */
function waitOf(error: string): number {
  const text = /(?:locked for|wait) ([^;.]*)/.exec(error)?.[1] ?? "";
  const unit: Record<string, number> = { d: 86_400_000, h: 3_600_000, min: MIN, s: 1000 };
  return [...text.matchAll(/(\d+) (d|h|min|s)\b/g)].reduce((ms, [, n, u]) => ms + Number(n) * unit[u], 0);
}
const refusedFor = (result: { ok: boolean; error?: string }) => (result.ok ? "signed in" : /locked|wait/.test(result.error!) ? "held" : "wrong");

describe.each(STORES)("signing in on %s", (store) => {
  useStore(store);

  it("holds an account back from one address after 10 failures, and the right password works once the wait is over", async () => {
    await createPerson({ email: "ada@example.com", password: PASSWORD, role: "viewer" });
    for (let i = 0; i < 9; i++) expect(refusedFor(await attempt("ada@example.com", "typo-typo-typo", "10.0.0.1", T0 + i))).toBe("wrong");
    const tenth = await attempt("ada@example.com", "typo-typo-typo", "10.0.0.1", T0 + 9);
    expect(tenth).toEqual({ ok: false, error: expect.stringMatching(/^Too many failed sign-ins: this account is locked for 1 min/) });
    expect(refusedFor(await attempt("ada@example.com", PASSWORD, "10.0.0.1", T0 + 30_000))).toBe("held");
    // Someone else's failures from elsewhere: Ada's own address is not held back by them.
    expect(refusedFor(await attempt("ada@example.com", PASSWORD, "10.0.0.2", T0 + 30_000))).toBe("signed in");
    expect(refusedFor(await attempt("ada@example.com", PASSWORD, "10.0.0.1", T0 + 9 + MIN))).toBe("signed in");
  });

  it("caps the wait at 15 minutes however many failures, and the right password works after it", async () => {
    await createPerson({ email: "bob@example.com", password: PASSWORD, role: "admin" });
    // An attacker fails again as soon as each wait ends: the waits double, never past 15 minutes.
    let now = T0;
    const waits: number[] = [];
    for (let i = 0; i < 24; i++) {
      const result = await attempt("bob@example.com", "guess-guess-guess", "198.51.100.9", now);
      const wait = result.ok ? 0 : waitOf(result.error!);
      waits.push(wait / MIN);
      now += wait || 1;
    }
    expect(waits.slice(9, 13)).toEqual([1, 2, 4, 8]);
    expect(Math.max(...waits)).toBeLessThanOrEqual(15);
    expect(refusedFor(await attempt("bob@example.com", PASSWORD, "198.51.100.9", now))).toBe("signed in");
  });

  it("lets a NAT address with many typos sign in again after the window, and an admin clear it at once", async () => {
    await createPerson({ email: "cy@example.com", password: PASSWORD, role: "operator" });
    // 60 people behind one address, each mistyping once.
    for (let i = 0; i < 60; i++) await attempt(`person${i}@example.com`, "typo-typo-typo", "192.0.2.50", T0 + i);
    const held = await attempt("cy@example.com", PASSWORD, "192.0.2.50", T0 + 100);
    expect(held).toEqual({ ok: false, error: expect.stringMatching(/^Too many failed sign-ins from this address: sign-ins from here wait/) });
    // Attempts refused while the address waits are not counted: 50 failures, the wait from the 50th.
    expect(await lockedAddresses(T0 + 100)).toEqual([{ address: "192.0.2.50", failures: 50, lockedUntil: new Date(T0 + 49 + MIN).toISOString() }]);
    // Nobody types again: after the window, everyone there signs in.
    expect(refusedFor(await attempt("cy@example.com", PASSWORD, "192.0.2.50", T0 + 16 * MIN))).toBe("signed in");
    expect(await lockedAddresses(T0 + 16 * MIN)).toEqual([]);

    for (let i = 0; i < 60; i++) await attempt(`person${i}@example.com`, "typo-typo-typo", "192.0.2.50", T0 + 20 * MIN + i);
    expect(refusedFor(await attempt("cy@example.com", PASSWORD, "192.0.2.50", T0 + 20 * MIN + 100))).toBe("held");
    expect(await unlockAddress("192.0.2.50")).toBe(true);
    expect(await unlockAddress("192.0.2.50")).toBe(false);
    expect(refusedFor(await attempt("cy@example.com", PASSWORD, "192.0.2.50", T0 + 20 * MIN + 101))).toBe("signed in");
  });

  it("shows an account held back on the People page until an admin unlocks it", async () => {
    await createPerson({ email: "dee@example.com", password: PASSWORD, role: "viewer" });
    const at = T0 + 60 * MIN;
    for (let i = 0; i < 10; i++) await attempt("Dee@Example.com", "typo-typo-typo", "10.9.9.9", at + i);
    const dee = (await peopleOverview(at + 10)).find((p) => p.email === "dee@example.com")!;
    expect(dee).toMatchObject({ failures: 10, lockedUntil: new Date(at + 9 + MIN).toISOString() });
    expect(refusedFor(await attempt("dee@example.com", PASSWORD, "10.9.9.9", at + 20))).toBe("held");
    expect(await unlock("DEE@example.com")).toBe(true);
    expect((await peopleOverview(at + 21)).find((p) => p.email === "dee@example.com")).toMatchObject({ failures: 0, lockedUntil: null });
    expect(refusedFor(await attempt("dee@example.com", PASSWORD, "10.9.9.9", at + 21))).toBe("signed in");
  });
});

describe.each(STORES)("sign-in throttling under pressure on %s", (store) => {
  useStore(store);
  const withCookie = (value: string) => new Headers({ cookie: `${KNOWN_DEVICE_COOKIE}=${value}` });
  // Hundreds of attempts: a plain stand-in for the slow password hash keeps them quick.
  let real: { hash: (p: string) => Promise<string>; verify: (d: { hash: string; password: string }) => Promise<boolean> };
  beforeAll(async () => {
    const { password } = await (await auth()).$context;
    real = { hash: password.hash, verify: password.verify };
    password.hash = async (p) => `plain:${p}`;
    password.verify = async ({ hash, password: p }) => hash === `plain:${p}`;
  });
  afterAll(async () => Object.assign((await (await auth()).$context).password, real));

  it("lets at most the limit of 30 parallel wrong guesses reach the password check", async () => {
    await createPerson({ email: "eve-target@example.com", password: PASSWORD, role: "admin" });
    const context = await (await auth()).$context;
    const verify = context.password.verify;
    let verified = 0;
    context.password.verify = async (data) => {
      verified++;
      return verify(data);
    };
    try {
      const results = await Promise.all(Array.from({ length: 30 }, () => attempt("eve-target@example.com", "guess-guess-guess", "203.0.113.30", T0 + 2 * 60 * MIN)));
      const counts = { wrong: 0, held: 0 };
      for (const r of results) counts[refusedFor(r) as "wrong" | "held"]++;
      // The 10th failure answers with the wait it starts, so "wrong" counts 9 and "held" 21.
      expect(verified).toBe(10);
      expect(counts).toEqual({ wrong: 9, held: 21 });
    } finally {
      context.password.verify = verify;
    }
  });

  it("does not hold back a browser that signed in as the person recently, whatever others try", async () => {
    await createPerson({ email: "fay@example.com", password: PASSWORD, role: "admin" });
    const at = T0 + 3 * 60 * MIN;
    const ok = await signIn({ email: "fay@example.com", password: PASSWORD, address: "10.7.7.7", headers: new Headers() }, at);
    expect(ok).toMatchObject({ ok: true, knownDevice: expect.any(String) });
    const device = (ok as { knownDevice: string }).knownDevice;
    // Guesses at other accounts from Fay's own address, and at hers from everywhere: the address and the account are held.
    for (let i = 0; i < 50; i++) await attempt(`nobody${i}@example.com`, "guess-guess-guess", "10.7.7.7", at + 1 + i);
    const guessEverywhere = async (from: number) => {
      for (let i = 0; i < 60; i++) await attempt("fay@example.com", "guess-guess-guess", `198.51.100.${i + 1}`, from + i);
    };
    await guessEverywhere(at + 1);
    expect(refusedFor(await attempt("fay@example.com", PASSWORD, "10.7.7.7", at + 100))).toBe("held");
    // Fay's browser, with its cookie, signs in; a cookie made for someone else, or forged, does not help.
    const fromDevice = (password: string, headers: Headers, now: number) => signIn({ email: "fay@example.com", password, address: "10.7.7.7", headers }, now);
    expect(refusedFor(await fromDevice(PASSWORD, withCookie(device), at + 101))).toBe("signed in");
    const other = await createPerson({ email: "gus@example.com", password: PASSWORD, role: "viewer" });
    const gus = (await signIn({ email: other.email, password: PASSWORD, address: "10.7.7.8", headers: new Headers() }, at + 102)) as { knownDevice: string };
    expect(refusedFor(await fromDevice(PASSWORD, withCookie(gus.knownDevice), at + 103))).toBe("held");
    expect(refusedFor(await fromDevice(PASSWORD, withCookie(`${device.slice(0, -2)}AA`), at + 104))).toBe("held");
    // The device's own typos still count: 10 of them hold it back.
    for (let i = 0; i < 10; i++) await fromDevice("typo-typo-typo", withCookie(device), at + 200 + i);
    expect(refusedFor(await fromDevice(PASSWORD, withCookie(device), at + 220))).toBe("held");
    // 30 days on, the cookie is no longer honoured.
    const later = at + 31 * 24 * 60 * MIN;
    await guessEverywhere(later);
    expect(refusedFor(await fromDevice(PASSWORD, withCookie(device), later + 100))).toBe("held");
  });

  it("counts IPv6 clients by their /64 for the per-address limit", async () => {
    await createPerson({ email: "hal@example.com", password: PASSWORD, role: "viewer" });
    const at = T0 + 40 * 24 * 60 * MIN;
    for (let i = 1; i <= 50; i++) await attempt(`nobody${i}@example.com`, "typo-typo-typo", `2001:db8:1:2::${i.toString(16)}`, at + i);
    expect(refusedFor(await attempt("hal@example.com", PASSWORD, "2001:db8:1:2:ffff:ee:dd:cc", at + 100))).toBe("held");
    expect(refusedFor(await attempt("hal@example.com", PASSWORD, "2001:db8:1:3::1", at + 100))).toBe("signed in");
    expect((await lockedAddresses(at + 100)).map((a) => a.address)).toEqual(["2001:db8:1:2::/64"]);
    // An admin clears it by any address in it.
    expect(await unlockAddress("2001:db8:1:2::abcd")).toBe(true);
    expect(refusedFor(await attempt("hal@example.com", PASSWORD, "2001:db8:1:2::1", at + 101))).toBe("signed in");
  });
});

describe.each(STORES)("the setup link on %s", (store) => {
  useStore(store);
  const code = (link: string) => new URL(link).searchParams.get("code")!;

  it("stops working once an admin exists another way, and no new one is made then", async () => {
    const link = await newSetupLink("http://radar.test");
    expect(await setupCodeValid(code(link))).toBe(true);
    await createPerson({ email: "root@example.com", password: PASSWORD, role: "admin" });
    expect(await readSetting("setup.code")).toBeNull();
    expect(await setupCodeValid(code(link))).toBe(false);
    await expect(completeSetup({ code: code(link), email: "late@example.com", password: PASSWORD })).rejects.toThrow(PersonError);
    await expect(newSetupLink("http://radar.test")).rejects.toThrow(/An admin exists already/);
    expect(await personByEmail("late@example.com")).toBeNull();
  });

  it("refuses in its own transaction when an admin appeared after the code was checked", async () => {
    const { prisma } = storePrisma();
    await prisma.user.deleteMany({});
    const link = await newSetupLink("http://radar.test");
    // An admin lands between the code's check and the transaction (while the password is hashed),
    // written behind the product's back as a concurrent creation on another instance would be.
    const context = await (await auth()).$context;
    const hash = context.password.hash;
    context.password.hash = async (password: string) => {
      const at = new Date(T0);
      await prisma.user.create({ data: { id: "racer", email: "racer@example.com", name: "racer", role: "admin", createdAt: at, updatedAt: at } });
      return hash(password);
    };
    try {
      await expect(completeSetup({ code: code(link), email: "second@example.com", password: PASSWORD })).rejects.toThrow(/An admin exists already/);
    } finally {
      context.password.hash = hash;
    }
    expect(await personByEmail("second@example.com")).toBeNull();
    expect((await listPeople()).map((p) => p.email)).toEqual(["racer@example.com"]);
  });

  it.runIf(store === "postgres")("lets no admin be made another way while a setup completes", async () => {
    const { prisma } = storePrisma();
    await prisma.user.deleteMany({});
    const link = await newSetupLink("http://radar.test");
    const waiting = async () => (await pool().query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).rows[0].n;
    const until = async (reached: () => Promise<boolean>) => {
      while (!(await reached())) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    // Another connection holds the setup's email, uncommitted: the setup, having taken the code and
    // found no admin, waits at its own insert, in flight.
    const holder = await pool().connect();
    const running: Promise<unknown>[] = [];
    try {
      await holder.query("BEGIN");
      await holder.query(`INSERT INTO "User" (id, name, email, "createdAt", "updatedAt") VALUES ('holder', 'holder', 'third@example.com', now(), now())`);
      running.push(completeSetup({ code: code(link), email: "third@example.com", password: PASSWORD }));
      await until(async () => (await waiting()) >= 1);
      // Meanwhile an admin is made from the shell: it waits for the setup instead of landing under it.
      running.push(createPerson({ email: "shell-admin@example.com", password: PASSWORD, role: "admin" }));
      await until(async () => (await waiting()) >= 2);
      expect(await prisma.user.count({ where: { role: "admin" } })).toBe(0);
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
    expect((await Promise.allSettled(running)).map((r) => r.status)).toEqual(["fulfilled", "fulfilled"]);
    expect((await listPeople()).map((p) => p.email).sort()).toEqual(["shell-admin@example.com", "third@example.com"]);
  });

  it("makes exactly one admin when the link is used twice at once", async () => {
    const { prisma } = storePrisma();
    await prisma.user.deleteMany({});
    const link = await newSetupLink("http://radar.test");
    const results = await Promise.allSettled([
      completeSetup({ code: code(link), email: "one@example.com", password: PASSWORD }),
      completeSetup({ code: code(link), email: "two@example.com", password: PASSWORD }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect((await listPeople()).map((p) => p.role)).toEqual(["admin"]);
    const admin = (await listPeople())[0];
    expect(refusedFor(await attempt(admin.email, PASSWORD, "10.1.1.1", Date.now()))).toBe("signed in");
  });
});
