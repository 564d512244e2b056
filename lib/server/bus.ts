import { EventEmitter } from "node:events";

/**
 * In-process publication of what changed, for the UI's server-sent event stream and for
 * directive long-polls. One emitter per process (kept on globalThis across dev reloads).
 */
export interface ThreadsChanged {
  type: "threads";
  /** Internal thread ids whose projection changed. */
  threadIds: number[];
  at: number;
}

export interface DirectivesPending {
  type: "directives";
  sourceId: string;
}

type BusMessage = ThreadsChanged | DirectivesPending;

const globalForBus = globalThis as unknown as { __radarBus?: EventEmitter };

function bus(): EventEmitter {
  if (!globalForBus.__radarBus) {
    globalForBus.__radarBus = new EventEmitter();
    // Every open dashboard tab and every long-polling source holds one listener.
    globalForBus.__radarBus.setMaxListeners(0);
  }
  return globalForBus.__radarBus;
}

export function publish(message: BusMessage): void {
  bus().emit(message.type, message);
}

export function subscribe<T extends BusMessage["type"]>(
  type: T,
  listener: (message: Extract<BusMessage, { type: T }>) => void,
): () => void {
  bus().on(type, listener as (message: BusMessage) => void);
  return () => bus().off(type, listener as (message: BusMessage) => void);
}
