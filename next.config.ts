import type { NextConfig } from "next";
import { MAX_IMPORT_FORM_BYTES } from "./lib/ingest/limits";
import { SECURITY_HEADERS } from "./lib/server/security-headers";

const nextConfig: NextConfig = {
  // better-sqlite3 is a native addon: load it from node_modules at run time, never bundle it.
  serverExternalPackages: ["better-sqlite3", "@prisma/adapter-better-sqlite3"],
  poweredByHeader: false,
  // `npm test` type-checks the whole tree (tsc --noEmit) as one of its tests; the build only builds.
  typescript: { ignoreBuildErrors: true },
  experimental: {
    // Server actions carry at most a capture upload (the Sources page import); Next's default is 1 MB.
    // Their origin is checked twice: proxy.ts allows only this server's origins, and Next then
    // requires Origin to match Host (so a reverse proxy must pass Host through).
    serverActions: { bodySizeLimit: MAX_IMPORT_FORM_BYTES },
    // proxy.ts sees every action, so Next copies its body up to this size and silently drops the
    // rest. Past the action limit by more than a read's chunk, so an oversized upload still meets
    // Next's own limit (and its refusal) instead of arriving cut short.
    proxyClientMaxBodySize: MAX_IMPORT_FORM_BYTES + 1024 * 1024,
  },
  // On every response, API and assets included (proxy.ts adds the pages' CSP).
  async headers() {
    return [{ source: "/:path*", headers: SECURITY_HEADERS.map(([key, value]) => ({ key, value })) }];
  },
};

export default nextConfig;
