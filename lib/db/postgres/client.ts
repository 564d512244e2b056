import { PrismaPg } from "@prisma/adapter-pg";
import type pg from "pg";
import { config } from "../../config";
import { PrismaClient } from "../generated-pg/client";
import { openPool, pool } from "./pool";
import { shared } from "@/lib/process-state";

/**
 * The Prisma client on PostgreSQL (the same models as on SQLite, through @prisma/adapter-pg), on a
 * pg Pool given to the adapter: the adapter parses each query's values itself, so the pool's
 * BIGINT parser (pool.ts) never reaches Prisma's answers.
 */
function prismaOn(source: pg.Pool, options?: { disposeExternalPool: boolean }): InstanceType<typeof PrismaClient> {
  return new PrismaClient({ adapter: new PrismaPg(source, options) });
}

/** A client of its own for `url` (a test, a tool): its pool is its own too, ended by $disconnect. */
export function openPostgresPrisma(url: string): InstanceType<typeof PrismaClient> {
  return prismaOn(openPool(url), { disposeExternalPool: true });
}

const sharedForPrisma = shared<{ pgPrisma?: { url: string; prisma: InstanceType<typeof PrismaClient> } }>("pgPrisma", () => ({}));

/**
 * The process-wide Prisma client for the configured PostgreSQL URL (like lib/db/client.ts's
 * `prisma`), on the process's one pool rather than a second one: $disconnect leaves that pool
 * open, closePool ends it.
 */
export function postgresPrisma(url = config().DATABASE_URL): InstanceType<typeof PrismaClient> {
  const open = sharedForPrisma.pgPrisma;
  if (open?.url === url) return open.prisma;
  if (open) void open.prisma.$disconnect().catch(() => undefined);
  sharedForPrisma.pgPrisma = { url, prisma: prismaOn(pool(url)) };
  return sharedForPrisma.pgPrisma.prisma;
}

export async function closePostgresPrisma(): Promise<void> {
  const open = sharedForPrisma.pgPrisma;
  sharedForPrisma.pgPrisma = undefined;
  await open?.prisma.$disconnect();
}
