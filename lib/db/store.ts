import { config, storeOf, type Store } from "../config";

/**
 * How one lib/db module answers on either store while its callers never change: the module
 * writes its SQLite bodies as an object and its PostgreSQL bodies as lib/db/postgres/<module>.ts
 * with the same exports, and exports what `onEitherStore` makes of the two. Each exported function
 * runs the body of the store DATABASE_URL names. The type makes the PostgreSQL module mirror the
 * SQLite one (a missing function or a different signature does not compile), and the module's
 * contract test (<module>.pg.test.ts) runs the same assertions on both. What both bodies share
 * (the records they answer with, the mapping of a row to one) lives in
 * lib/db/records/<module>.ts, which both import: neither body imports the other's module.
 *
 * The store is read on every call, not fixed at import: the configuration is parsed once per
 * process (so a server never switches), and a contract test can run both stores in one process
 * by changing DATABASE_URL and calling resetConfig().
 */
export function currentStore(): Store {
  const store = storeOf(config().DATABASE_URL);
  if (!store) throw new Error(`DATABASE_URL names no known store: "${config().DATABASE_URL}"`);
  return store;
}

// `never[]` parameters: any function that answers with a promise (a store is asynchronous for its callers).
type Bodies = Record<string, (...args: never[]) => Promise<unknown>>;

// What onEitherStore made: a test lists lib/db's exports and finds any that answers on one store only.
const madeOnEitherStore = new WeakSet<object>();

/** Whether a function was made by onEitherStore (it answers on the store DATABASE_URL names). */
export function isOnEitherStore(fn: unknown): boolean {
  return typeof fn === "function" && madeOnEitherStore.has(fn);
}

export function onEitherStore<T extends Bodies>(sqlite: T, postgres: NoInfer<T>): T {
  const either = {} as Record<string, unknown>;
  for (const name of Object.keys(sqlite)) {
    const body = (...args: unknown[]) => ((currentStore() === "postgres" ? postgres : sqlite)[name] as (...args: unknown[]) => Promise<unknown>)(...args);
    madeOnEitherStore.add(body);
    either[name] = body;
  }
  return either as T;
}
