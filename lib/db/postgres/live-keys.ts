import pg from "pg";
import { within } from "@/lib/within";
import { CLIENT_KEEPALIVE, closeQuietly, DEAD_PEER_SETTINGS } from "./dedicated";

/**
 * Live updates across instances: the keys of changed threads travel on one NOTIFY channel, so a
 * browser on one instance hears of a batch ingested on another. The message is what the
 * in-process bus (lib/server/bus.ts) publishes: a thread's key, marked `reorder` when lists
 * filtered or sorted by status may change. Each instance keeps coalescing for its own browsers;
 * this only carries keys between buses. The bus's other publications (directives pending for a
 * source, usage windows or incidents changed) travel on a second channel, on the same connection.
 *
 * Notifications sent while a listener is disconnected are lost, so after every reconnect the
 * subscriber calls onResync: its bus must then tell every browser to refetch what it shows, and
 * every long-polling relay to look for its directives again.
 */
export interface LiveKey {
  key: number;
  reorder: boolean;
}

export const LIVE_KEYS_CHANNEL = "radar_thread_keys";
export const LIVE_NOTICES_CHANNEL = "radar_notices";

/**
 * A publication that only says "this changed": for `directives`, the source whose relay should
 * look for them (a long-poll on another instance wakes at once); `resync`, anything may have: a
 * publisher whose notifications failed sends it once it can again, for what the others missed.
 */
export type LiveNotice =
  | { type: "limits" }
  | { type: "incidents" }
  | { type: "resync" }
  | { type: "directives"; sourceId: string }
  | { type: "principals"; kind: PrincipalsKind; id: string };

/** Whose credentials changed (lib/server/bus.ts, PrincipalsChanged). */
type PrincipalsKind = "person" | "sessions" | "session" | "key";
const PRINCIPALS_KINDS: readonly string[] = ["person", "sessions", "session", "key"] satisfies PrincipalsKind[];

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; chunks stay below with room. */
const MAX_PAYLOAD_BYTES = 7_900;

/**
 * One payload: `origin;` then the keys, comma-separated, a reorder key ending in `!` (ASCII, so
 * characters are bytes). `origin` names the publishing instance, so it can skip its own keys.
 */
export function encodeKeys(origin: string, keys: LiveKey[]): string[] {
  const head = `${origin};`;
  const payloads: string[] = [];
  let current = "";
  for (const { key, reorder } of keys) {
    const item = `${key}${reorder ? "!" : ""}`;
    if (current && head.length + current.length + 1 + item.length > MAX_PAYLOAD_BYTES) {
      payloads.push(head + current);
      current = "";
    }
    current = current ? `${current},${item}` : item;
  }
  if (current) payloads.push(head + current);
  return payloads;
}

export function decodeKeys(payload: string): { origin: string; keys: LiveKey[] } {
  const split = payload.indexOf(";");
  const keys = payload
    .slice(split + 1)
    .split(",")
    .filter(Boolean)
    .map((item) => (item.endsWith("!") ? { key: Number(item.slice(0, -1)), reorder: true } : { key: Number(item), reorder: false }));
  return { origin: payload.slice(0, split), keys };
}

/**
 * Publishes changed keys to every instance. Inside a transaction the notifications go out when it
 * commits (and never if it rolls back), so publishing in the unit of work that changed the threads
 * announces only what was saved. One round trip whatever the number of chunks.
 */
export async function publishKeys(client: pg.ClientBase | pg.Pool, keys: LiveKey[], origin = ""): Promise<void> {
  const payloads = encodeKeys(origin, keys);
  if (!payloads.length) return;
  await client.query(`SELECT pg_notify($1, payload) FROM unnest($2::text[]) WITH ORDINALITY AS p(payload, n) ORDER BY n`, [LIVE_KEYS_CHANNEL, payloads]);
}

/**
 * One notice's payload: `origin;type`, then `;sourceId` for directives, `;kind;id` for principals
 * (ids are at most a few dozen bytes).
 */
export function encodeNotice(origin: string, notice: LiveNotice): string {
  if (notice.type === "directives") return `${origin};${notice.type};${notice.sourceId}`;
  if (notice.type === "principals") return `${origin};${notice.type};${notice.kind};${notice.id}`;
  return `${origin};${notice.type}`;
}

export function decodeNotice(payload: string): { origin: string; notice: LiveNotice } | null {
  const [origin, type, ...rest] = payload.split(";");
  if (type === "directives" && rest.length) return { origin, notice: { type, sourceId: rest.join(";") } };
  if (type === "principals" && rest.length >= 2 && PRINCIPALS_KINDS.includes(rest[0])) {
    return { origin, notice: { type, kind: rest[0] as PrincipalsKind, id: rest.slice(1).join(";") } };
  }
  if (type === "limits" || type === "incidents" || type === "resync") return { origin, notice: { type } };
  return null;
}

/** Publishes a notice to every instance (after the commit that made it, or in its transaction). */
export async function publishNotice(client: pg.ClientBase | pg.Pool, notice: LiveNotice, origin = ""): Promise<void> {
  await client.query(`SELECT pg_notify($1, $2)`, [LIVE_NOTICES_CHANNEL, encodeNotice(origin, notice)]);
}

export interface KeySubscription {
  /** Resolves once the first LISTEN is in place: keys published after it arrive. */
  ready: Promise<void>;
  close(): Promise<void>;
}

export interface SubscribeOptions {
  /** The first wait before reconnecting after a drop; it doubles up to maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Called with what broke the connection or failed a reconnect (it is retried). */
  onError?: (error: Error) => void;
  /** Called with each notice (LIVE_NOTICES_CHANNEL) and the origin its publisher gave. */
  onNotice?: (notice: LiveNotice, origin: string) => void;
  /** How often the connection is checked (LIVE_CHECK_MS), and how long a check may take. */
  checkMs?: number;
  checkTimeoutMs?: number;
}

/**
 * A listening connection only receives, so one a NAT or balancer silently forgot would never
 * report an error: it is asked `SELECT 1` this often, and one that does not answer within
 * LIVE_CHECK_TIMEOUT_MS is dropped and replaced (then onResync).
 */
export const LIVE_CHECK_MS = 5_000;
export const LIVE_CHECK_TIMEOUT_MS = 3_000;

/**
 * Listens for changed keys (and notices, with options.onNotice) on one connection of its own,
 * checked every LIVE_CHECK_MS, reconnecting with backoff after a drop or a failed check (then
 * onResync, since what was sent meanwhile is lost).
 * `onKeys` gets each chunk as it arrives with the origin its publisher gave.
 */
export function subscribeKeys(url: string, onKeys: (keys: LiveKey[], origin: string) => void, onResync: () => void, options: SubscribeOptions = {}): KeySubscription {
  const first = options.backoffMs ?? 100;
  const max = options.maxBackoffMs ?? 5_000;
  const checkMs = options.checkMs ?? LIVE_CHECK_MS;
  const checkTimeoutMs = options.checkTimeoutMs ?? LIVE_CHECK_TIMEOUT_MS;
  let client: pg.Client | null = null;
  let closed = false;
  let backoff = first;
  let timer: NodeJS.Timeout | null = null;
  let checking = false;
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  const drop = (error: Error) => {
    const lost = client;
    client = null;
    if (!lost) return;
    // A forgotten socket may never finish a polite end: cut it.
    (lost as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    void closeQuietly(lost);
    options.onError?.(error);
    retry();
  };

  const retry = () => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = null;
      void listen(true);
    }, backoff);
    timer.unref?.();
    backoff = Math.min(max, backoff * 2);
  };

  /** The periodic check: a connection that does not answer in time is dropped (and replaced). */
  const check = async () => {
    const held = client;
    if (!held || checking) return;
    checking = true;
    try {
      if (!(await within(held.query("SELECT 1"), checkTimeoutMs)).settled) throw new Error(`the live-keys connection did not answer a check within ${checkTimeoutMs} ms`);
    } catch (error) {
      if (client === held) drop(error as Error);
    } finally {
      checking = false;
    }
  };
  const checker = setInterval(() => void check(), checkMs);
  checker.unref?.();

  const listen = async (again: boolean) => {
    const fresh = new pg.Client({ connectionString: url, application_name: "radar-live-keys", ...CLIENT_KEEPALIVE, connectionTimeoutMillis: 10_000 });
    fresh.on("error", (error) => (client === fresh ? drop(error) : undefined));
    fresh.on("end", () => (client === fresh ? drop(new Error("the live-keys connection ended")) : undefined));
    fresh.on("notification", (message) => {
      if (message.payload === undefined) return;
      if (message.channel === LIVE_KEYS_CHANNEL) {
        const { origin, keys } = decodeKeys(message.payload);
        onKeys(keys, origin);
      } else if (message.channel === LIVE_NOTICES_CHANNEL) {
        const decoded = decodeNotice(message.payload);
        if (decoded) options.onNotice?.(decoded.notice, decoded.origin);
      }
    });
    try {
      await fresh.connect();
      await fresh.query(DEAD_PEER_SETTINGS);
      await fresh.query(`LISTEN ${LIVE_KEYS_CHANNEL}`);
      if (options.onNotice) await fresh.query(`LISTEN ${LIVE_NOTICES_CHANNEL}`);
    } catch (error) {
      void closeQuietly(fresh);
      options.onError?.(error as Error);
      return retry();
    }
    if (closed) return closeQuietly(fresh);
    client = fresh;
    backoff = first;
    markReady();
    if (again) onResync();
  };

  void listen(false);

  return {
    ready,
    async close() {
      closed = true;
      clearInterval(checker);
      if (timer) clearTimeout(timer);
      timer = null;
      const held = client;
      client = null;
      if (held) await closeQuietly(held);
    },
  };
}
