import type { SourceRecord } from "@/lib/db/sources";
import { sourceForToken } from "./tokens";
import { problem } from "./http";

type RouteContext<P> = { params: Promise<P> };

/**
 * Wraps an ingestion route: the bearer token identifies the source. Wrong or missing → 401,
 * with a detail that says which.
 */
export function withIngestSource<P = Record<string, never>>(
  handler: (request: Request, source: SourceRecord, context: RouteContext<P>) => Promise<Response>,
) {
  return async (request: Request, context: RouteContext<P>): Promise<Response> => {
    const header = request.headers.get("authorization");
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      return problem(401, "Unauthorized", "Send the source's ingest token as `Authorization: Bearer <token>`.");
    }
    const source = await sourceForToken(match[1]);
    if (!source) return problem(401, "Unauthorized", "The ingest token is unknown or has been revoked.");
    return handler(request, source, context);
  };
}

/** Who performs operator actions. Real roles arrive later; every action already goes through here. */
export interface Operator {
  name: string;
}

export type OperatorAction = "stop" | "stop-all" | "create-token" | "revoke-token" | "update-source" | "import";

export async function authorizeOperator(action: OperatorAction): Promise<Operator> {
  void action;
  // Retry Radar serves 127.0.0.1 by default: the local operator may do everything.
  return { name: process.env.RADAR_OPERATOR_NAME || "local operator" };
}
