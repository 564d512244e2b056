import { isMultipart } from "../server-action";

/**
 * Which of the listener's routes (route-table.ts) a request names, and whether Next would run
 * proxy.ts for it: matching only, so it is tested without loading any route.
 */

/** A route as matched: a method and a path with at most one `[name]` segment per parameter. */
export interface RoutePattern {
  method: string;
  path: string;
}

/** A path Next normalises before routing it (a trailing slash, `//`, dot segments): Next redirects or answers it as it always has. */
const NEEDS_NORMALISING = /\/\/|\/\.\.?(\/|$)|.\/$/;

export interface LeanMatch<R extends RoutePattern> {
  route: R;
  /** Path parameters, still percent-encoded (the caller decodes them as Next would). */
  params: Record<string, string>;
}

/**
 * The route of `routes` a request's method and raw path name, or null for Next. A path Next would
 * normalise first (a trailing slash, `//`, dot segments) is left to Next, which redirects or
 * answers it as it always has.
 */
export function matchLeanRoute<R extends RoutePattern>(routes: readonly R[], method: string, rawPath: string): LeanMatch<R> | null {
  if (NEEDS_NORMALISING.test(rawPath)) return null;
  const segments = rawPath.split("/");
  for (const route of routes) {
    if (route.method !== method) continue;
    const params = matchPath(route.path, segments);
    if (params) return { route, params };
  }
  return null;
}

/**
 * Whether Next would run proxy.ts for this request (its `config.matcher`): API requests without
 * a body, those carrying a server action id or a multipart form, and /api/ paths with a non-ASCII escape. Other
 * requests with a body skip it there (their route wrapper checks the Host), and so they do here.
 */
export function passesProxy(rawPath: string, headers: { [name: string]: string | string[] | undefined }): boolean {
  if (headers["content-length"] === undefined && headers["transfer-encoding"] === undefined) return true;
  if (headers["next-action"] !== undefined) return true;
  if (isMultipart(typeof headers["content-type"] === "string" ? headers["content-type"] : undefined)) return true;
  return rawPath.startsWith("/api/") && /%[89a-fA-F]/.test(rawPath);
}

/** The parameters of `segments` (a raw path split at "/") under `pattern`, still percent-encoded; null when it does not match. */
function matchPath(pattern: string, segments: readonly string[]): Record<string, string> | null {
  const parts = pattern.split("/");
  if (parts.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const name = /^\[(\w+)\]$/.exec(parts[i])?.[1];
    if (name) params[name] = segments[i];
    else if (parts[i] !== segments[i]) return null;
  }
  return params;
}
