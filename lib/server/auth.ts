import { config } from "@/lib/config";
import type { SourceRecord } from "@/lib/db/sources";
import { problem, refuseCrossSite } from "./http";
import { sourceForToken } from "./tokens";

/**
 * Who may call a route or a server action; every one declares it. `ingest` callers are sources
 * (bearer token); the others are people. Today every person is the local operator, so viewer,
 * operator and admin all pass — `authorize` is the one place that changes when roles arrive.
 */
export type Access = "public" | "ingest" | "viewer" | "operator" | "admin";

/** Who performs operator actions. Real roles arrive later; every action already goes through here. */
export interface Operator {
  name: string;
}

export type OperatorAction = "stop" | "stop-all" | "create-token" | "revoke-token" | "update-source" | "import";

/** The authenticated caller a handler receives, by the access it declared. */
export type CallerFor<A extends Access> = A extends "public" ? {} : A extends "ingest" ? { source: SourceRecord } : { operator: Operator };

export type Authorized<A extends Access> = { ok: true; caller: CallerFor<A> } | { ok: false; response: Response };

/**
 * The single authorization check. `request` is absent for server actions (Next checks their
 * origin itself); over plain HTTP a state-changing operator request must not come cross-site.
 */
export async function authorize<A extends Access>(access: A, request: Request | null, action?: OperatorAction): Promise<Authorized<A>> {
  if (access === "public") return { ok: true, caller: {} as CallerFor<A> };
  if (access === "ingest") {
    if (!request) throw new Error("An ingest caller is identified by its request.");
    const source = await ingestSource(request);
    return source instanceof Response ? { ok: false, response: source } : { ok: true, caller: { source } as CallerFor<A> };
  }
  if (request && access !== "viewer") {
    const refused = refuseCrossSite(request);
    if (refused) return { ok: false, response: refused };
  }
  return { ok: true, caller: { operator: await authorizeOperator(action) } as CallerFor<A> };
}

/** The bearer token identifies the source. Wrong or missing → 401, with a detail that says which. */
async function ingestSource(request: Request): Promise<SourceRecord | Response> {
  const header = request.headers.get("authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match) return problem(401, "Unauthorized", "Send the source's ingest token as `Authorization: Bearer <token>`.");
  return (await sourceForToken(match[1])) ?? problem(401, "Unauthorized", "The ingest token is unknown or has been revoked.");
}

async function authorizeOperator(action: OperatorAction | undefined): Promise<Operator> {
  void action;
  // Retry Radar serves 127.0.0.1 by default: the local operator may do everything.
  return { name: config().RADAR_OPERATOR_NAME };
}
