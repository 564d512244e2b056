import { NextResponse, type NextRequest } from "next/server";
import { edgeSettings, refuseAtEdge } from "@/lib/server/edge";
import { contentSecurityPolicy, newNonce } from "@/lib/server/security-headers";

/**
 * Runs before every page, every request carrying a server action id or a multipart form, and
 * every body-less API request: refuses foreign hosts, foreign action origins and undecodable paths, and gives each page
 * load its CSP nonce. API requests with a body and no action id skip it (see `config`); the route
 * wrapper checks their Host.
 */
export function proxy(request: NextRequest) {
  const refused = refuseAtEdge(request, edgeSettings());
  if (refused) return refused;
  if (request.nextUrl.pathname.startsWith("/api/") || request.nextUrl.pathname.startsWith("/v1/")) return NextResponse.next();

  const policy = contentSecurityPolicy(newNonce(), { development: process.env.NODE_ENV === "development" });
  // Next reads the nonce from the request's CSP while rendering and puts it on its scripts.
  const headers = new Headers(request.headers);
  headers.set("content-security-policy", policy);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("content-security-policy", policy);
  return response;
}

export const config = {
  matcher: [
    // Every request carrying a server action id, whatever its path or body: Next runs an action
    // wherever it renders a page, its not-found page (an unknown /api/ or /v1/ path, /favicon.ico)
    // included, so its origin is checked everywhere (a legitimate client never sends one to the API).
    { source: "/:path*", has: [{ type: "header", key: "next-action" }] },
    // …and every multipart form, which Next runs as an action without that header (a form posted
    // without JavaScript). No API route takes multipart, so none loses its own body limit to this.
    { source: "/:path*", has: [{ type: "header", key: "content-type", value: "multipart/form-data.*" }] },
    // Pages and their server actions (an action posts to its page's path), except build assets.
    { source: "/((?!api/|v1/|_next/static/|_next/image|favicon.ico).*)" },
    // API requests without a body. With a body, a proxy makes Next copy it into memory and read it
    // to its end before the route runs, defeating the routes' own body limits (ingestion takes
    // 10 MiB): those requests go straight to their route, whose wrapper checks the Host.
    // …and those whose path has a non-ASCII escape, so an undecodable one gets its 400 here.
    { source: "/api/:path(.*%[89a-fA-F].*)" },
    {
      source: "/api/:path*",
      missing: [
        { type: "header", key: "content-length" },
        { type: "header", key: "transfer-encoding" },
      ],
    },
    // The OpenTelemetry receiver (/v1/logs, /v1/traces, /v1/metrics) is an API like /api/ is.
    {
      source: "/v1/:path*",
      missing: [
        { type: "header", key: "content-length" },
        { type: "header", key: "transfer-encoding" },
      ],
    },
  ],
};
