/**
 * The one place process-wide state lives: the database handles, the write queue, the live-update
 * bus, rate limits, caches, timers, the watchdog. Next's build and the listener's bundle
 * (lib/server/listener/) each hold their own copy of every lib/ module in one process (and Next's
 * build splits instrumentation.ts from the routes too), so state kept in a module's own variables
 * would exist once per copy. `shared(key, create)` keeps it in one Map on globalThis, under a
 * registered symbol every copy finds: the first copy to ask creates it, every other gets the same.
 */
const STATE = Symbol.for("retry-radar.process-state");

type State = Map<string, unknown>;

function state(): State {
  const slots = globalThis as unknown as Record<symbol, State | undefined>;
  return (slots[STATE] ??= new Map());
}

/** The process's one value under `key`, made by `create` the first time any copy asks. */
export function shared<T>(key: string, create: () => T): T {
  const all = state();
  if (!all.has(key)) all.set(key, create());
  return all.get(key) as T;
}
