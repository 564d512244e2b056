import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated-pg/client";

/** The Prisma client on PostgreSQL (the same models as on SQLite, through @prisma/adapter-pg). */
export function openPostgresPrisma(url: string): InstanceType<typeof PrismaClient> {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: url }) });
}
