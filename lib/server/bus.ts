import { EventEmitter } from "node:events";
import { shared } from "@/lib/process-state";

/**
 * In-process publication of what changed, for the UI's server-sent event stream and for
 * directive long-polls. One emitter per process (lib/process-state.ts).
 *
 * The live-update protocol (README "Live updates"): the bus carries the keys of the threads
 * whose projection changed, each marked `reorder` when lists that filter or sort by status may
 * change membership or order (a new thread, a changed status). Thread changes are coalesced with
 * a leading edge: the first after a quiet spell goes out at once, later ones are merged and go
 * out together at most once per COALESCE_MS, so a burst of ingestion costs each subscriber one
 * message per window however many batches it holds. With several instances on one PostgreSQL
 * database, what this process publishes is relayed to the others, and theirs enter here (Relay).
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

/**
 * What other instances published while this one could not hear them (its listener reconnected):
 * anything may have changed, so every browser refetches what it shows and every long-polling
 * relay looks for its directives again.
 */
export interface Resync {
  type: "resync";
  at: number;
}

/**
 * Someone's credentials were withdrawn or changed: an API key revoked, a person disabled or their
 * role changed (`person`: every session and key of theirs), "sign out everywhere" (`sessions`: the
 * person's sessions), one session signed out (`session`, by its id). Open live streams of that
 * caller end at once (lib/server/live-stream.ts) and the browser reconnects with what it holds
 * now. Never coalesced: each names whom it concerns.
 */
export interface PrincipalsChanged {
  type: "principals";
  kind: "person" | "sessions" | "session" | "key";
  /** The person's id, the session's or the key's. */
  id: string;
}

/** Messages that say only "this changed, refetch": coalesced per type like thread changes. */
type Notice = LimitsChanged | IncidentsChanged;
export type NoticeType = Notice["type"];

type BusMessage = ThreadsChanged | DirectivesPending | Notice | Resync | PrincipalsChanged;

/**
 * Carries this process's own publications to the other instances on one database
 * (lib/server/instances.ts, on PostgreSQL); on SQLite there is none. What it sends is coalesced
 * like what the bus emits, so a burst costs the database one notification per window and kind.
 * What arrives from other instances enters through the `received…` functions, which never relay
 * it again.
 */
export interface Relay {
  threads(changes: ThreadChange[]): void;
  notice(type: NoticeType): void;
  directives(sourceId: string): void;
  principals(change: Omit<PrincipalsChanged, "type">): void;
}

/**
 * How long later publications of a kind wait to be merged into one: on a busy fleet every change
 * waits up to this long before it reaches a screen, so it is kept short; each window costs one
 * publication per stream (one to a few messages) and one read of the rows they carry for every 40
 * threads (lib/server/live-stream.ts).
 */
export const COALESCE_MS = 50;

/**
 * The one coalescing window, with a leading edge: the first publication after a quiet spell goes
 * out at once and opens a window; what arrives while it is open is merged into `held` and goes
 * out together when it ends, which opens the next window. A steady stream costs one publication
 * per window.
 */
class CoalescingWindow<Held> {
  /** What waits for the end of the open window; undefined when none is open. */
  held: Held | undefined;

  constructor(
    private readonly fresh: () => Held,
    private readonly waiting: (held: Held) => boolean,
    private readonly send: (held: Held, at: number) => void,
  ) {}

  /** Adds to what the open window holds; with no window open, sends it at once and opens one. */
  publish(add: (held: Held) => void, at: number): void {
    if (this.held !== undefined) return add(this.held);
    const now = this.fresh();
    add(now);
    this.send(now, at);
    this.open();
  }

  private open() {
    this.held = this.fresh();
    const timer = setTimeout(() => {
      const held = this.held!;
      this.held = undefined;
      if (!this.waiting(held)) return;
      this.send(held, Date.now());
      this.open();
    }, COALESCE_MS);
    timer.unref?.();
  }
}

/** Thread changes merged by key: a key is `reorder` if any of its changes was. */
type HeldChanges = Map<number, boolean>;

/** Thread changes and notices, each coalesced in its window before `send`. */
interface Windows {
  threads: CoalescingWindow<HeldChanges>;
  /** Per notice type: how many wait for the end of its window. */
  notices: Map<NoticeType, CoalescingWindow<{ count: number }>>;
  noticeSend: (type: NoticeType, at: number) => void;
}

function windows(sendThreads: (changes: ThreadChange[], at: number) => void, noticeSend: (type: NoticeType, at: number) => void): Windows {
  const threads = new CoalescingWindow<HeldChanges>(
    () => new Map(),
    (held) => held.size > 0,
    (held, at) => sendThreads([...held].map(([key, reorder]) => ({ key, reorder })), at),
  );
  return { threads, notices: new Map(), noticeSend };
}

function addChanges(target: Windows, threads: ThreadChange[], now: number): void {
  target.threads.publish((held) => {
    for (const change of threads) held.set(change.key, (held.get(change.key) ?? false) || change.reorder);
  }, now);
}

function addNotice(target: Windows, type: NoticeType, now: number): void {
  let window = target.notices.get(type);
  if (!window) {
    window = new CoalescingWindow(
      () => ({ count: 0 }),
      (held) => held.count > 0,
      (_, at) => target.noticeSend(type, at),
    );
    target.notices.set(type, window);
  }
  window.publish((held) => held.count++, now);
}

interface Bus {
  emitter: EventEmitter;
  /** What this process's subscribers get. */
  local: Windows;
  /** What goes to other instances, when a relay is set. */
  relay: { to: Relay; windows: Windows } | null;
}

const sharedForBus = shared<{ bus?: Bus }>("bus", () => ({}));

function bus(): Bus {
  if (!sharedForBus.bus) {
    const emitter = new EventEmitter();
    // Every open dashboard tab and every long-polling source holds one listener.
    emitter.setMaxListeners(0);
    const local = windows(
      (threads, at) => emit({ type: "threads", threads, at }),
      (type, at) => emit({ type, at }),
    );
    sharedForBus.bus = { emitter, local, relay: null };
  }
  return sharedForBus.bus;
}

/** Sends this process's publications to other instances from now on (null: no longer). */
export function relayTo(relay: Relay | null): void {
  bus().relay = relay && {
    to: relay,
    windows: windows(
      (threads) => relay.threads(threads),
      (type) => relay.notice(type),
    ),
  };
}

/** Publishes thread changes: at once if no window is open, else at the end of the window. */
export function publishThreadChanges(threads: ThreadChange[], now = Date.now()): void {
  if (threads.length === 0) return;
  const { local, relay } = bus();
  addChanges(local, threads, now);
  if (relay) addChanges(relay.windows, threads, now);
}

/** Whether a coalescing window is open (the next thread change would wait for its end). */
export function coalescing(): boolean {
  return bus().local.threads.held !== undefined;
}

/** Publishes that usage windows changed, coalesced like thread changes (leading edge, one per window). */
export function publishLimitsChanged(now = Date.now()): void {
  publishNotice("limits", now);
}

/** Publishes that incidents changed, coalesced like usage windows. */
export function publishIncidentsChanged(now = Date.now()): void {
  publishNotice("incidents", now);
}

function publishNotice(type: NoticeType, now: number): void {
  const { local, relay } = bus();
  addNotice(local, type, now);
  if (relay) addNotice(relay.windows, type, now);
}

/** Directive publications wake long-polling sources at once: they are never coalesced. */
export function publishDirectivesPending(sourceId: string): void {
  emit({ type: "directives", sourceId });
  bus().relay?.to.directives(sourceId);
}

/** Publishes that credentials changed (see PrincipalsChanged), here and on every other instance, at once. */
export function publishPrincipalsChanged(change: Omit<PrincipalsChanged, "type">): void {
  emit({ type: "principals", kind: change.kind, id: change.id });
  bus().relay?.to.principals({ kind: change.kind, id: change.id });
}

/* What other instances published (lib/server/instances.ts): to this process's subscribers only. */

export function receivedThreadChanges(threads: ThreadChange[], now = Date.now()): void {
  if (threads.length) addChanges(bus().local, threads, now);
}

export function receivedNotice(type: NoticeType, now = Date.now()): void {
  addNotice(bus().local, type, now);
}

export function receivedDirectivesPending(sourceId: string): void {
  emit({ type: "directives", sourceId });
}

export function receivedPrincipalsChanged(change: Omit<PrincipalsChanged, "type">): void {
  emit({ type: "principals", kind: change.kind, id: change.id });
}

/** Tells every subscriber that publications may have been missed (see Resync). */
export function publishResync(now = Date.now()): void {
  emit({ type: "resync", at: now });
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
