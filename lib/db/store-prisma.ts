import { db, type DatabaseHandles } from "./client";
import { postgresPrisma } from "./postgres/client";
import { currentStore } from "./store";

// Apart from store.ts, which every lib/db module imports to choose its store: only what needs
// the store's Prisma client loads PostgreSQL's generated one.
/**
 * The store's Prisma client, for the authentication library's adapter (which writes its own
 * tables through Prisma, not through lib/db): both generated clients have the same models, so it
 * is typed as the SQLite one; `provider` names the store in the adapter's words.
 */
export function storePrisma(): { prisma: DatabaseHandles["prisma"]; provider: "sqlite" | "postgresql" } {
  if (currentStore() === "postgres") return { prisma: postgresPrisma() as unknown as DatabaseHandles["prisma"], provider: "postgresql" };
  return { prisma: db().prisma, provider: "sqlite" };
}
