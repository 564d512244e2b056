import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SSO_CALLBACK_PATH } from "../../lib/auth/sso";
import { builtActions, callAction, fillSegments as fill, type ActionInput } from "../support/actions";
import { queryDatabase, startServer, type RunningServer } from "../support/server";

/**
 * Anonymous access, enumerated: every route file and HTTP method on disk, every page, and every
 * server action of the build (by its action id) gets a real request without credentials from
 * the built server, and is refused. A route, page or action added later is found here too, so
 * one that forgets its access rule fails this suite by name.
 */
const root = path.resolve(import.meta.dirname, "..", "..");
const APP = path.join(root, "app");
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

/** Routes anyone may call, and why; every other route answers an anonymous caller 401. */
const PUBLIC_ROUTES: Record<string, { reason: string; check: (answer: Answer) => void }> = {
  "/api/health GET": {
    reason: "liveness for load balancers and the start script: tells only that it is up and its version",
    check: (answer) => expect(answer.status).toBe(200),
  },
  "/api/auth/[...all] GET": {
    reason: "the single sign-on callback, which signs in only with the provider's valid code (checked below)",
    check: (answer) => {
      expect(answer.status).not.toBe(200);
      expect(answer.sessionCookie).toBe(false);
    },
  },
};

/** Pages anyone may open: they are how one signs in. */
const PUBLIC_PAGES = new Set(["/sign-in", "/setup"]);

/** Server actions anyone may call: each must grant nothing without valid input. */
const PUBLIC_ACTIONS = new Set(["lib/actions/sign-in.ts#signIn", "lib/actions/setup.ts#setUp", "lib/actions/sign-in-sso.ts#signInWithSso"]);

interface Answer {
  status: number;
  contentType: string;
  location: string;
  body: string;
  sessionCookie: boolean;
}

let server: RunningServer;
const threadId = `access-${Date.now().toString(36)}`;
/** Facts of the running server that actions' inputs name (a thread's key, a source, a token). */
let facts: { threadKey: number; sourceId: string; tokenId: string; personId: string; keyId: string };

beforeAll(async () => {
  // A person exists (the admin from the environment), so actions on people have someone to name.
  server = await startServer({ RADAR_ADMIN_EMAIL: "admin@access.test", RADAR_ADMIN_PASSWORD: "access-admin-password" });
  const sent = await fetch(`${server.url}/api/v1/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: JSON.stringify([
      { threadId, type: "turn.started", turnId: "t1", agent: "codex", provider: "openai", model: "gpt-5.5", title: "a secret title" },
      { threadId, type: "retry", turnId: "t1", attempt: 1, maxAttempts: 5, error: { httpStatus: 429, message: "Rate limit reached." } },
    ]),
  });
  expect(sent.status, await sent.text()).toBe(200);
  const id = async <T>(sql: string, params: unknown[] = []) => (await queryDatabase<{ id: T }>(server, sql, params))[0].id;
  facts = {
    threadKey: await id<number>(`SELECT id FROM "Thread" WHERE "externalId" = ?`, [threadId]),
    sourceId: await id<string>(`SELECT id FROM "Source" LIMIT 1`),
    tokenId: await id<string>(`SELECT id FROM "IngestToken" LIMIT 1`),
    personId: await id<string>(`SELECT id FROM "User" LIMIT 1`),
    keyId: await id<string>(`SELECT id FROM "ApiKey" LIMIT 1`),
  };
});
afterAll(() => server?.stop());


/** Everything an action could change or grant: people, sessions, keys, sources, tokens, directives, the audit log. */
async function state(): Promise<string> {
  const tables = ["User", "Session", "Account", "ApiKey", "Source", "IngestToken", "Directive", "AuditEntry"];
  return JSON.stringify(await Promise.all(tables.map((table) => queryDatabase(server, `SELECT * FROM "${table}" ORDER BY 1`))));
}

/** What a public action could grant: how many people, sessions, keys, sources, tokens and directives there are. */
async function grants(): Promise<Record<string, number>> {
  const tables = ["User", "Session", "ApiKey", "Source", "IngestToken", "Directive"];
  // Counts as numbers on either store (PostgreSQL's count(*) is a BIGINT, which pg reads as text).
  return Object.fromEntries(await Promise.all(tables.map(async (table) => [table, Number((await queryDatabase<{ n: number | string }>(server, `SELECT COUNT(*) AS n FROM "${table}"`))[0].n)])));
}

/** Who may do what is granted only through a session; these are the library's session cookies. */
const grantsSession = (response: Response) => response.headers.getSetCookie().some((cookie) => /session_token=[^;]+/.test(cookie));

async function call(pathname: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${server.url}${pathname}`, { redirect: "manual", ...init });
  return {
    status: response.status,
    contentType: response.headers.get("content-type") ?? "",
    location: response.headers.get("location") ?? "",
    body: init.method === "HEAD" ? "" : await response.text(),
    sessionCookie: grantsSession(response),
  };
}

/** Every file named `name` under app/, as its URL pattern (`app/api/v1/threads/[id]/route.ts` → `/api/v1/threads/[id]`). */
function appFiles(name: string): { pattern: string; file: string }[] {
  const found: { pattern: string; file: string }[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name === name) {
        const segments = path.relative(APP, dir).split(path.sep).filter((s) => s && !/^\(.*\)$/.test(s));
        found.push({ pattern: `/${segments.join("/")}`, file: path.relative(root, full) });
      }
    }
  };
  walk(APP);
  return found.sort((a, b) => a.pattern.localeCompare(b.pattern));
}

const routes = appFiles("route.ts").flatMap(({ pattern, file }) => {
  const source = fs.readFileSync(path.join(root, file), "utf8");
  return METHODS.filter((method) => new RegExp(`export\\s+(const|async\\s+function|function)\\s+${method}\\b`).test(source)).map((method) => ({ pattern, method, file }));
});
const pages = appFiles("page.tsx").map(({ pattern }) => pattern);

/** Nothing the server read with its keys shows up for a stranger. */
function expectNothingOf(answer: Pick<Answer, "body">, label: string) {
  expect(answer.body, `${label} gave away a thread`).not.toContain(threadId);
  expect(answer.body, `${label} gave away a thread's title`).not.toContain("a secret title");
}

describe("API routes refuse an anonymous caller", () => {
  it("finds the routes on disk", () => {
    expect(routes.length).toBeGreaterThan(10);
    expect(routes.map((r) => `${r.pattern} ${r.method}`)).toContain("/api/v1/threads/[id]/stop POST");
  });

  it.each(routes.map((r) => [`${r.method} ${r.pattern}`, r] as const))("%s", async (label, { pattern, method, file }) => {
    const answer = await call(fill(pattern), method === "GET" || method === "HEAD" ? { method } : { method, headers: { "content-type": "application/json" }, body: "{}" });
    const allowed = PUBLIC_ROUTES[`${pattern} ${method}`];
    if (allowed) {
      allowed.check(answer);
    } else {
      // The message names the route, so the one that lost its access rule is plain.
      expect(answer.status, `${label} (${file}) answered an anonymous caller ${answer.status}, not 401: has it lost its access rule?`).toBe(401);
      if (method !== "HEAD") expect(answer.contentType, `${label} (${file}) must refuse with problem+json`).toContain("application/problem+json");
    }
    expectNothingOf(answer, label);
  });

  it("the live stream, exports and metrics give nothing", async () => {
    for (const pathname of ["/api/v1/stream", "/api/v1/exports/threads", "/api/v1/exports/events", `/api/v1/threads/${threadId}/export`, "/api/metrics"]) {
      const answer = await call(pathname);
      expect(answer.status, pathname).toBe(401);
      expect(answer.contentType, pathname).not.toContain("event-stream");
      expectNothingOf(answer, pathname);
    }
  });

  it("ingestion and directives ask for the source's token", async () => {
    for (const pathname of ["/api/v1/events", "/api/v1/ingest/codex", "/api/v1/directives/placeholder/ack"]) {
      const answer = await call(pathname, { method: "POST", headers: { "content-type": "application/json" }, body: "[]" });
      expect(answer.status, pathname).toBe(401);
      expect(answer.body, pathname).toContain("ingest token");
    }
    expect((await call("/api/v1/directives")).status).toBe(401);
  });

  it("the single sign-on callback grants nothing without the provider's valid code", async () => {
    const before = await state();
    const answer = await call(`${SSO_CALLBACK_PATH}?code=forged&state=forged`);
    expect(answer.status).not.toBe(200);
    expect(answer.sessionCookie).toBe(false);
    expect(await state()).toBe(before);
  });
});

describe("pages send an anonymous visitor to sign in", () => {
  it("finds the pages on disk", () => {
    expect(pages).toEqual(expect.arrayContaining(["/", "/sign-in", "/setup", "/threads/[id]"]));
  });

  it.each(pages.map((p) => [p] as const))("%s", async (pattern) => {
    const pathname = fill(pattern);
    const answer = await call(pathname);
    if (PUBLIC_PAGES.has(pattern)) {
      expect(answer.status, `${pattern} is how one signs in`).toBe(200);
    } else {
      expect([303, 307, 308], `${pattern} answered an anonymous visitor ${answer.status}, not a redirect to sign in`).toContain(answer.status);
      expect(answer.location, `${pattern} must redirect to /sign-in?next=…`).toMatch(/^(https?:\/\/[^/]+)?\/sign-in\?next=/);
    }
    expectNothingOf(answer, pattern);
  });
});

describe("server actions refuse an anonymous caller", () => {
  const actions = builtActions();

  /**
   * An input each action accepts (its schema passes), so a refusal is the access rule's and not
   * the input's. A new action needs one here: the test says so by name.
   */
  const inputs: Record<string, () => ActionInput> = {
    "lib/actions/sign-out.ts#signOut": () => ({ object: { everywhere: true } }),
    "lib/actions/stop-thread.ts#stopThread": () => ({ object: { key: facts.threadKey, reason: "anonymous" } }),
    "lib/actions/resume-thread.ts#resumeThread": () => ({ object: { key: facts.threadKey, reason: "anonymous" } }),
    "lib/actions/retry-thread-now.ts#retryThreadNow": () => ({ object: { key: facts.threadKey, reason: "anonymous" } }),
    "lib/actions/archive-thread.ts#archiveThread": () => ({ object: { key: facts.threadKey, archive: true } }),
    "lib/actions/snooze-thread.ts#snoozeThread": () => ({ object: { key: facts.threadKey, until: "2030-01-01T00:00:00Z" } }),
    "lib/actions/stop-matching.ts#stopMatching": () => ({ object: { query: "", expected: 1 } }),
    "lib/actions/stop-incident.ts#stopIncident": () => ({ object: { incidentId: "inc-unknown", expected: 1 } }),
    "lib/actions/acknowledge-incident.ts#acknowledgeIncident": () => ({ object: { incidentId: "inc-unknown" } }),
    "lib/actions/annotate-incident.ts#annotateIncident": () => ({ object: { incidentId: "inc-unknown", text: "anonymous note" } }),
    "lib/actions/silence-incident.ts#silenceIncident": () => ({ object: { incidentId: "inc-unknown", minutes: 60 } }),
    "lib/actions/create-alert-destination.ts#addAlertDestination": () => ({ form: { name: "intruder", url: "https://hooks.example.com/x", format: "json" } }),
    "lib/actions/delete-alert-destination.ts#removeAlertDestination": () => ({ form: { destinationId: "dst-unknown" } }),
    "lib/actions/create-alert-rule.ts#addAlertRule": () => ({ form: { destinationId: "dst-unknown", event: "incident.opened", threshold: "" } }),
    "lib/actions/delete-alert-rule.ts#removeAlertRule": () => ({ form: { ruleId: "rule-unknown" } }),
    "lib/actions/send-test-alert.ts#sendTestAlert": () => ({ form: { destinationId: "dst-unknown" } }),
    "lib/actions/create-token.ts#createIngestToken": () => ({ form: { name: "intruder" } }),
    "lib/actions/revoke-token.ts#revokeIngestToken": () => ({ form: { tokenId: facts.tokenId } }),
    "lib/actions/update-source.ts#updateSource": () => ({ form: { sourceId: facts.sourceId, policy: "" } }),
    "lib/actions/import-capture.ts#importCapture": () => ({ form: { sourceId: facts.sourceId, file: new File(['{"type":"x"}\n'], "capture.jsonl") } }),
    "lib/actions/sign-in.ts#signIn": () => ({ form: { email: "intruder@access.test", password: "not-the-password" } }),
    "lib/actions/setup.ts#setUp": () => ({ form: { code: "forged-setup-code", email: "intruder@access.test", password: "intruder-password-long" } }),
    "lib/actions/sign-in-sso.ts#signInWithSso": () => ({ form: {} }),
    "lib/actions/create-person.ts#addPerson": () => ({ form: { email: "intruder@access.test", role: "admin", password: "intruder-password-long" } }),
    "lib/actions/set-person-role.ts#setPersonRole": () => ({ form: { personId: facts.personId, role: "viewer" } }),
    "lib/actions/disable-person.ts#disablePerson": () => ({ form: { personId: facts.personId } }),
    "lib/actions/enable-person.ts#enablePerson": () => ({ form: { personId: facts.personId } }),
    "lib/actions/unlock-person.ts#unlockPerson": () => ({ form: { personId: facts.personId } }),
    "lib/actions/unlock-person.ts#unlockSignInAddress": () => ({ form: { address: "203.0.113.7" } }),
    "lib/actions/create-api-key.ts#addApiKey": () => ({ form: { name: "intruder", role: "admin" } }),
    "lib/actions/revoke-api-key.ts#revokeApiKey": () => ({ form: { keyId: facts.keyId } }),
  };

  it("finds the actions of the build", () => {
    expect(actions.map((a) => a.name)).toEqual(expect.arrayContaining(["lib/actions/stop-thread.ts#stopThread", "lib/actions/sign-in.ts#signIn"]));
  });

  it.each(actions.map((a) => [a.name, a] as const))("%s", async (name, action) => {
    const input = inputs[name];
    expect(input, `${name} has no sample input in e2e/api/access.test.ts: add one its schema accepts`).toBeDefined();
    const before = await state();
    const grantedBefore = await grants();
    const { response, body, result } = await callAction(server.url, action, input!());
    expect(grantsSession(response), `${name} gave an anonymous caller a session`).toBe(false);
    expect(result?.ok, `${name} (action ${action.id}) did not refuse an anonymous caller: ${response.status} ${body.slice(0, 300)}`).toBe(false);
    if (PUBLIC_ACTIONS.has(name)) {
      // Anyone may try; no person, session, key or token came of it (a failed sign-in is audited).
      expect(await grants(), `${name} granted something without valid input`).toEqual(grantedBefore);
    } else {
      expect(result!.error, `${name} (action ${action.id}) refused for another reason than access: has it lost its access rule?`).toMatch(/sign in|permission/i);
      expect(await state(), `${name} changed something for an anonymous caller`).toBe(before);
    }
    expectNothingOf({ body }, name);
  });
});
