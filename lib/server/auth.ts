import { principalForApiKey } from "@/lib/auth/api-keys";
import { auth } from "@/lib/auth/better-auth";
import { bearer, credentialKind } from "@/lib/auth/credentials";
import type { Principal } from "@/lib/auth/principal";
import { roleAllows, roleOf, type Role } from "@/lib/auth/roles";
import { config } from "@/lib/config";
import { endSession } from "@/lib/db/people";
import type { SourceRecord } from "@/lib/db/sources";
import { problem, refuseCrossSite } from "./http";
import { sourceForToken } from "./tokens";

/**
 * Who may call a route or a server action; every one declares it, and this module is the only
 * place that checks it. `ingest` callers are sources (their ingest token); `viewer`, `operator`
 * and `admin` are people, signed in with a session cookie or presenting an API key; `public`
 * is anyone (sign-in, health, the SSO callback).
 */
export type Access = "public" | "ingest" | Role;

/** What an operator or admin route or action does: its audit action and, in a refusal, what was asked. */
export type OperatorAction =
  | "stop"
  | "stop-all"
  | "resume"
  | "retry-now"
  | "archive"
  | "snooze"
  | "incident.stop-all"
  | "incident.acknowledge"
  | "incident.annotate"
  | "incident.silence"
  | "alert.destination.create"
  | "alert.destination.delete"
  | "alert.rule.create"
  | "alert.rule.delete"
  | "alert.test"
  | "create-token"
  | "revoke-token"
  | "update-source"
  | "import"
  | "sign-in"
  | "sign-out"
  | "setup"
  | "person.create"
  | "person.role"
  | "person.disable"
  | "person.enable"
  | "person.unlock"
  | "address.unlock"
  | "key.create"
  | "key.revoke";

/** The authenticated caller a handler receives, by the access it declared. */
export type CallerFor<A extends Access> = A extends "public" ? { principal: Principal | null } : A extends "ingest" ? { source: SourceRecord } : { principal: Principal };

export type Authorized<A extends Access> = { ok: true; caller: CallerFor<A> } | { ok: false; response: Response; status: 401 | 403 };

const PERMISSION: Record<Role, string> = {
  viewer: "viewer (read the fleet)",
  operator: "operator (stop retrying, stop all matching, import captures)",
  admin: "admin (sources, ingest tokens, policies, people and API keys)",
};

/**
 * The single authorization check. `request` is absent for server actions and pages (their
 * headers come from Next; Next checks a server action's origin itself); over plain HTTP a
 * state-changing request with a session cookie must not come cross-site.
 */
export async function authorize<A extends Access>(access: A, request: Request | null): Promise<Authorized<A>> {
  if (access === "ingest") {
    if (!request) throw new Error("An ingest caller is identified by its request.");
    const source = await ingestSource(request);
    return source instanceof Response ? { ok: false, response: source, status: 401 } : { ok: true, caller: { source } as CallerFor<A> };
  }
  const headers = request ? request.headers : await requestHeaders();
  const identified = await identify(headers);
  if (identified instanceof Response) return { ok: false, response: identified, status: 401 };
  if (access === "public") return { ok: true, caller: { principal: identified } as CallerFor<A> };
  const needed = access as Role;
  if (!identified) {
    return { ok: false, status: 401, response: problem(401, "Unauthorized", `Sign in, or send an API key as \`Authorization: Bearer <key>\`; this needs the ${PERMISSION[needed]} permission.`) };
  }
  if (!roleAllows(identified.role, needed)) {
    return {
      ok: false,
      status: 403,
      response: problem(403, "Forbidden", `This needs the ${PERMISSION[needed]} permission; ${identified.actor} is a ${identified.role}.`, { permission: needed }),
    };
  }
  if (request && needed !== "viewer") {
    const refused = refuseCrossSite(request);
    if (refused) return { ok: false, response: refused, status: 403 };
  }
  return { ok: true, caller: { principal: identified } as CallerFor<A> };
}

/**
 * The signed-in person or API key behind these headers; null when anonymous; a 401 for a bad
 * credential. `refresh: false` only asks: a session's idle expiry is not pushed back.
 */
export async function identify(headers: Headers, now = Date.now(), { refresh = true }: { refresh?: boolean } = {}): Promise<Principal | null | Response> {
  const secret = bearer(headers);
  if (secret) {
    if (credentialKind(secret) !== "api-key") {
      return problem(401, "Unauthorized", "An ingest token only sends events and reads its own source's directives; use an API key (`rrk_…`) or sign in.");
    }
    return (await principalForApiKey(secret, now)) ?? problem(401, "Unauthorized", "The API key is unknown or has been revoked, or its owner is disabled.");
  }
  if (!headers.get("cookie")) return null;
  const found = await (await auth()).api.getSession({ headers, query: refresh ? undefined : { disableRefresh: true } });
  if (!found) return null;
  const { session, user } = found as { session: { id: string; createdAt: Date }; user: { id: string; email: string; name: string; role?: string | null; banned?: boolean | null } };
  if (user.banned) return null;
  // The absolute lifetime: however much a session is used, it ends this long after sign-in.
  if (now - new Date(session.createdAt).getTime() > config().RADAR_SESSION_MAX_HOURS * 3_600_000) {
    await endSession(session.id);
    return null;
  }
  return { kind: "person", id: user.id, role: roleOf(user.role), actor: user.email, personId: user.id, displayName: user.name || user.email, sessionId: session.id };
}

/**
 * Whether these headers still identify the caller as it was (the same key or session, the same
 * role): what a long-lived response (the live stream) asks again now and then. Asking does not
 * extend a session.
 */
export async function stillHolds(headers: Headers, principal: Principal): Promise<boolean> {
  const current = await identify(headers, Date.now(), { refresh: false });
  if (current === null || current instanceof Response) return false;
  return current.kind === principal.kind && current.id === principal.id && current.sessionId === principal.sessionId && current.role === principal.role;
}

async function requestHeaders(): Promise<Headers> {
  const { headers } = await import("next/headers");
  return new Headers(await headers());
}

/** The bearer token identifies the source. Wrong or missing → 401, with a detail that says which. */
async function ingestSource(request: Request): Promise<SourceRecord | Response> {
  const secret = bearer(request);
  if (!secret) return problem(401, "Unauthorized", "Send the source's ingest token as `Authorization: Bearer <token>`.");
  if (credentialKind(secret) === "api-key") return problem(401, "Unauthorized", "An API key does not ingest; send the source's ingest token (`rr_…`).");
  return (await sourceForToken(secret)) ?? problem(401, "Unauthorized", "The ingest token is unknown or has been revoked.");
}
