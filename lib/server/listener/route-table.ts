import * as health from "@/app/api/health/route";
import * as metrics from "@/app/api/metrics/route";
import * as ack from "@/app/api/v1/directives/[id]/ack/route";
import * as directives from "@/app/api/v1/directives/route";
import * as events from "@/app/api/v1/events/route";
import * as auditExport from "@/app/api/v1/exports/audit/route";
import * as factsExport from "@/app/api/v1/exports/[kind]/route";
import * as nativeIngest from "@/app/api/v1/ingest/[format]/route";
import * as threadExport from "@/app/api/v1/threads/[id]/export/route";
import * as otlpLogs from "@/app/v1/logs/route";
import * as otlpMetrics from "@/app/v1/metrics/route";
import * as otlpTraces from "@/app/v1/traces/route";

/** A route file's handler, as Next calls it: a Web Request and its path parameters in, a Response out. */
export type RouteHandler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

/**
 * The routes the ingestion listener serves itself instead of handing them to Next: what agents
 * and relays call many times a second, and what monitoring polls. Each names the handler its
 * route file exports (the same function Next calls for it), imported into the listener's bundle.
 */
export interface LeanRoute {
  method: "GET" | "POST";
  /** The path, with one `[name]` segment at most standing for a parameter. */
  path: string;
  handler: RouteHandler;
  /** Its answer is written as it streams (an export), not read whole first, and gzipped when the client takes it. */
  streamed?: boolean;
}

export const LEAN_ROUTES: readonly LeanRoute[] = [
  { method: "POST", path: "/api/v1/events", handler: events.POST },
  { method: "POST", path: "/api/v1/ingest/[format]", handler: nativeIngest.POST },
  { method: "POST", path: "/v1/logs", handler: otlpLogs.POST },
  { method: "POST", path: "/v1/traces", handler: otlpTraces.POST },
  { method: "POST", path: "/v1/metrics", handler: otlpMetrics.POST },
  { method: "GET", path: "/api/v1/directives", handler: directives.GET },
  { method: "POST", path: "/api/v1/directives/[id]/ack", handler: ack.POST },
  // What a load balancer and Prometheus ask every few seconds: Next's routing would cost each
  // more than its answer (docs/benchmarks.md).
  { method: "GET", path: "/api/health", handler: health.GET },
  { method: "GET", path: "/api/metrics", handler: metrics.GET },
  // Exports: gzipped as they stream by zlib off the event loop. The audit export before `[kind]`,
  // which would match it too.
  { method: "GET", path: "/api/v1/exports/audit", handler: auditExport.GET, streamed: true },
  { method: "GET", path: "/api/v1/exports/[kind]", handler: factsExport.GET, streamed: true },
  { method: "GET", path: "/api/v1/threads/[id]/export", handler: threadExport.GET, streamed: true },
];
