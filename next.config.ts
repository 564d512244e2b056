import type { NextConfig } from "next";
import { MAX_IMPORT_FORM_BYTES } from "./lib/ingest/limits";

const nextConfig: NextConfig = {
  // better-sqlite3 is a native addon: load it from node_modules at run time, never bundle it.
  serverExternalPackages: ["better-sqlite3", "@prisma/adapter-better-sqlite3"],
  poweredByHeader: false,
  // `npm test` type-checks the whole tree (tsc --noEmit) as one of its tests; the build only builds.
  typescript: { ignoreBuildErrors: true },
  // Server actions carry at most a capture upload (the Sources page import); Next's default is 1 MB.
  experimental: { serverActions: { bodySizeLimit: MAX_IMPORT_FORM_BYTES } },
};

export default nextConfig;
