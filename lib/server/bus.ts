import { EventEmitter } from "node:events";

/**
 * In-process publication of what changed, for the UI's server-sent event stream and for
 * directive long-polls. One emitter per process (kept on globalThis across dev reloads).
 *
 * The live-update protocol (README "Live updates"): the bus carries the keys of the threads
 * whose projection changed, each marked `reorder` when lists that filter or sort by status may
 * change membership or order (a new thread, a changed status). Thread changes are coalesced with
 * a leading edge: the first after a quiet spell goes out at once, later ones are merged and go
 * out together at most once per COALESCE_MS, so a burst of ingestion costs each subscriber one
 * message per window however many batches it holds.
 */
export interface ThreadChange {
  /** The thread's key (unique across sources). */
  key: number;
  /** New, or its status changed: a list filtered or sorted by status may gain, lose or reorder rows. */
  reorder: boolean;
}

export interface ThreadsChanged {
  type: "threads";
  threads: ThreadChange[];
  at: number;
}

export interface DirectivesPending {
  type: "directives";
  sourceId: string;
}

/** Some usage window got a new snapshot: the Limits page refetches its rows. */
export interface LimitsChanged {
  type: "limits";
  at: number;
}

/** An incident opened, grew or closed: the board's banners and the incidents pages refetch. */
export interface IncidentsChanged {
  type: "incidents";
  at: number;
}

/** Messages that say only "this changed, refetch": coalesced per type like thread changes. */
type Notice = LimitsChanged | IncidentsChanged;

type BusMessage = ThreadsChanged | DirectivesPending | Notice;

/** How long later thread changes wait to be merged into one publication. */
export const COALESCE_MS = 100;

interface Bus {
  emitter: EventEmitter;
  /** Thread changes held back during the current window, by key; null when no window is open. */
  held: Map<number, boolean> | null;
  /** Per notice type: absent when no window is open, else whether one is held for its end. */
  noticesHeld: Map<Notice["type"], boolean>;
}

const globalForBus = globalThis as unknown as { __radarBus?: Bus };

function bus(): Bus {
  if (!globalForBus.__radarBus) {
    const emitter = new EventEmitter();
    // Every open dashboard tab and every long-polling source holds one listener.
    emitter.setMaxListeners(0);
    globalForBus.__radarBus = { emitter, held: null, noticesHeld: new Map() };
  }
  return globalForBus.__radarBus;
}

/** Publishes thread changes: at once if no window is open, else at the end of the window. */
export function publishThreadChanges(threads: ThreadChange[], now = Date.now()): void {
  if (threads.length === 0) return;
  const b = bus();
  if (b.held) {
    for (const change of threads) b.held.set(change.key, (b.held.get(change.key) ?? false) || change.reorder);
    return;
  }
  emit({ type: "threads", threads: merge(threads), at: now });
  openWindow(b);
}

/** Whether a coalescing window is open (the next thread change would wait for its end). */
export function coalescing(): boolean {
  return bus().held !== null;
}

function openWindow(b: Bus) {
  b.held = new Map();
  const timer = setTimeout(() => {
    const held = b.held!;
    b.held = null;
    if (held.size === 0) return;
    emit({ type: "threads", threads: [...held].map(([key, reorder]) => ({ key, reorder })), at: Date.now() });
    // A steady stream keeps one publication per window.
    openWindow(b);
  }, COALESCE_MS);
  timer.unref?.();
}

function merge(threads: ThreadChange[]): ThreadChange[] {
  const byKey = new Map<number, boolean>();
  for (const change of threads) byKey.set(change.key, (byKey.get(change.key) ?? false) || change.reorder);
  return [...byKey].map(([key, reorder]) => ({ key, reorder }));
}

/** Publishes that usage windows changed, coalesced like thread changes (leading edge, one per window). */
export function publishLimitsChanged(now = Date.now()): void {
  publishNotice("limits", now);
}

/** Publishes that incidents changed, coalesced like usage windows. */
export function publishIncidentsChanged(now = Date.now()): void {
  publishNotice("incidents", now);
}

function publishNotice(type: Notice["type"], now: number): void {
  const b = bus();
  if (b.noticesHeld.has(type)) {
    b.noticesHeld.set(type, true);
    return;
  }
  emit({ type, at: now });
  openNoticeWindow(b, type);
}

function openNoticeWindow(b: Bus, type: Notice["type"]) {
  b.noticesHeld.set(type, false);
  const timer = setTimeout(() => {
    const held = b.noticesHeld.get(type);
    b.noticesHeld.delete(type);
    if (!held) return;
    emit({ type, at: Date.now() });
    openNoticeWindow(b, type);
  }, COALESCE_MS);
  timer.unref?.();
}

/** Directive publications wake long-polling sources at once: they are never coalesced. */
export function publishDirectivesPending(sourceId: string): void {
  emit({ type: "directives", sourceId });
}

function emit(message: BusMessage): void {
  bus().emitter.emit(message.type, message);
}

export function subscribe<T extends BusMessage["type"]>(
  type: T,
  listener: (message: Extract<BusMessage, { type: T }>) => void,
): () => void {
  const { emitter } = bus();
  emitter.on(type, listener as (message: BusMessage) => void);
  return () => emitter.off(type, listener as (message: BusMessage) => void);
}
