import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtAction, callAction } from "../support/actions";
import { queryDatabase, startServer, type RunningServer } from "../support/server";

/**
 * The session cookie and its lifetimes against the built server: HttpOnly, SameSite=Lax, Secure
 * only when the public URL is https; idle expiry, absolute expiry (RADAR_SESSION_MAX_HOURS) and
 * signing out everywhere.
 */
const ADMIN = { email: "lead@session.test", password: "lead-session-password" };
const MAX_HOURS = 24;
const people = { RADAR_ADMIN_EMAIL: ADMIN.email, RADAR_ADMIN_PASSWORD: ADMIN.password, RADAR_SESSION_MAX_HOURS: String(MAX_HOURS) };
let server: RunningServer;
let secure: RunningServer;

beforeAll(async () => {
  [server, secure] = await Promise.all([startServer(people), startServer({ ...people, RADAR_PUBLIC_URL: "https://radar.example.test" })]);
});
afterAll(() => Promise.all([server?.stop(), secure?.stop()]));

/** Signs in through the sign-in form's action; the session cookie as the server set it, and as a `cookie` header. */
async function signIn(on: RunningServer) {
  const { response, body } = await callAction(on.url, builtAction("lib/actions/sign-in.ts#signIn"), { form: { email: ADMIN.email, password: ADMIN.password } });
  const setCookie = response.headers.getSetCookie().find((cookie) => /session_token=/.test(cookie));
  if (!setCookie) throw new Error(`no session cookie: ${response.status} ${body.slice(0, 300)}`);
  const pair = setCookie.split(";")[0];
  // The cookie's value is the session token and its signature.
  const token = decodeURIComponent(pair.slice(pair.indexOf("=") + 1)).split(".")[0];
  const knownDevice = response.headers.getSetCookie().find((cookie) => cookie.startsWith("radar.known_device="));
  return { setCookie, cookie: pair, token, knownDevice };
}

/** A viewer's read with this cookie: 200 while the session lives, 401 after. */
const readWith = async (cookie: string) => (await fetch(`${server.url}/api/v1/threads`, { headers: { cookie } })).status;

/** Changes a session row in the server's database, keeping the way the column stores time. */
async function setSessionTime(token: string, column: "expiresAt" | "createdAt", at: number) {
  const [row] = await queryDatabase<{ at: number | string | Date }>(server, `SELECT "${column}" AS at FROM "Session" WHERE token = ?`, [token]);
  const value = typeof row.at === "number" ? at : new Date(at).toISOString();
  await queryDatabase(server, `UPDATE "Session" SET "${column}" = ? WHERE token = ?`, [value, token]);
}

const sessionExists = async (token: string) => (await queryDatabase(server, `SELECT 1 FROM "Session" WHERE token = ?`, [token])).length > 0;

describe("the session cookie", () => {
  it("is HttpOnly and SameSite=Lax, and not Secure on http://127.0.0.1", async () => {
    const { setCookie, cookie } = await signIn(server);
    expect(setCookie).toMatch(/^radar\.session_token=/);
    expect(setCookie).toMatch(/;\s*HttpOnly/i);
    expect(setCookie).toMatch(/;\s*SameSite=Lax/i);
    expect(setCookie).not.toMatch(/;\s*Secure/i);
    expect(await readWith(cookie)).toBe(200);
  });

  it("is Secure (and __Secure- named) when RADAR_PUBLIC_URL is https", async () => {
    const { setCookie } = await signIn(secure);
    expect(setCookie).toMatch(/^__Secure-radar\.session_token=/);
    expect(setCookie).toMatch(/;\s*Secure/i);
    expect(setCookie).toMatch(/;\s*HttpOnly/i);
    expect(setCookie).toMatch(/;\s*SameSite=Lax/i);
  });
});

describe("a session ends", () => {
  it("when unused for the idle time (its expiry has passed)", async () => {
    const { cookie, token } = await signIn(server);
    expect(await readWith(cookie)).toBe(200);
    await setSessionTime(token, "expiresAt", Date.now() - 60_000);
    expect(await readWith(cookie)).toBe(401);
  });

  it("RADAR_SESSION_MAX_HOURS after sign-in, however much it is used", async () => {
    const { cookie, token } = await signIn(server);
    // Still within its idle time (just used), but signed in longer ago than the absolute lifetime.
    await setSessionTime(token, "createdAt", Date.now() - (MAX_HOURS + 1) * 3_600_000);
    expect(await readWith(cookie)).toBe(401);
    expect(await sessionExists(token)).toBe(false);
  });

  it("everywhere when the person signs out everywhere", async () => {
    const here = await signIn(server);
    const elsewhere = await signIn(server);
    expect(await readWith(elsewhere.cookie)).toBe(200);
    const { result } = await callAction(server.url, builtAction("lib/actions/sign-out.ts#signOut"), { object: { everywhere: true } }, { cookie: here.cookie });
    expect(result).toMatchObject({ ok: true });
    expect(await readWith(elsewhere.cookie)).toBe(401);
    expect(await readWith(here.cookie)).toBe(401);
  });
});

describe("the known-device cookie (lib/auth/known-device.ts)", () => {
  it("is set on sign-in, HttpOnly, SameSite=Lax, for 30 days, and Secure only when RADAR_PUBLIC_URL is https", async () => {
    const { knownDevice } = await signIn(server);
    expect(knownDevice).toMatch(/;\s*HttpOnly/i);
    expect(knownDevice).toMatch(/;\s*SameSite=Lax/i);
    expect(knownDevice).toMatch(/;\s*Max-Age=2592000/i);
    expect(knownDevice).not.toMatch(/;\s*Secure/i);
    expect((await signIn(secure)).knownDevice).toMatch(/;\s*Secure/i);
  });
});
