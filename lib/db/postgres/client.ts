import { PrismaPg } from "@prisma/adapter-pg";
import { config } from "../../config";
import { PrismaClient } from "../generated-pg/client";

/** The Prisma client on PostgreSQL (the same models as on SQLite, through @prisma/adapter-pg). */
export function openPostgresPrisma(url: string): InstanceType<typeof PrismaClient> {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: url }) });
}

const globalForPrisma = globalThis as unknown as { __radarPgPrisma?: { url: string; prisma: InstanceType<typeof PrismaClient> } };

/** The process-wide Prisma client for the configured PostgreSQL URL (like lib/db/client.ts's `prisma`). */
export function postgresPrisma(url = config().DATABASE_URL): InstanceType<typeof PrismaClient> {
  const open = globalForPrisma.__radarPgPrisma;
  if (open?.url === url) return open.prisma;
  if (open) void open.prisma.$disconnect().catch(() => undefined);
  globalForPrisma.__radarPgPrisma = { url, prisma: openPostgresPrisma(url) };
  return globalForPrisma.__radarPgPrisma.prisma;
}

export async function closePostgresPrisma(): Promise<void> {
  const open = globalForPrisma.__radarPgPrisma;
  globalForPrisma.__radarPgPrisma = undefined;
  await open?.prisma.$disconnect();
}
