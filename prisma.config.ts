import { defineConfig } from "prisma/config";

// Prisma 7's CLI insists on a native schema-engine binary for every command and cannot download
// one on these offline machines. `prisma generate` never runs it, so any executable satisfies the
// check. Migrations are committed SQL applied by the app itself (lib/db/migrate.ts). The same holds
// for the PostgreSQL schema, generated with `--schema prisma/postgres/schema.prisma` (postinstall).
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= "/bin/false";

export default defineConfig({
  schema: "prisma/schema.prisma",
  datasource: { url: process.env.DATABASE_URL ?? "file:./data/radar.db" },
});
