import type { Principal } from "@/lib/auth/principal";
import { streamLimits } from "@/lib/config";
import { threadRows } from "@/lib/db/threads";
import type { StreamThreads } from "@/lib/wire/types";
import { subscribe, type PrincipalsChanged, type ThreadsChanged } from "./bus";
import { clientAddress } from "./edge";
import { problem } from "./http";
import { shared } from "@/lib/process-state";

/**
 * The UI's server-sent event stream (GET /api/v1/stream): `threads` announces which threads
 * changed, and when few did (LIVE_ROWS_PUBLICATION_MAX), carries their rows as the unfiltered
 * board shows them, read once per publication whatever the number of open streams (boards of
 * that filter then need no request; others read their rows by key); a comment heartbeat keeps
 * proxies from closing it.
 *
 * It cannot be abused: streams are capped per client address and in total (429 with
 * Retry-After beyond), and a consumer that stops reading is dropped once STREAM_BUFFER_BYTES are
 * queued for it, instead of buffering every publication in server memory.
 *
 * It never outlives its caller's credentials: they are asked again every PRINCIPAL_RECHECK_MS,
 * and a `principals` publication (a key revoked, a person disabled or their role changed,
 * sessions signed out, here or on another instance) ends the streams it concerns at once. Every
 * stream also ends after STREAM_MAX_LIFETIME_MS. An ended stream's last event is `end` with
 * `{reason}` ("credentials" or "lifetime"); the browser then reconnects with the credentials it
 * holds now, and one refused is signed out (components/live/live-updates.tsx).
 */
const HEARTBEAT_MS = 15_000;

/** How often an open stream asks again whether its caller's credentials still hold. */
export const PRINCIPAL_RECHECK_MS = 30_000;

/**
 * The longest a stream stays open: then it ends and the browser opens another, authenticated
 * afresh. Bounds what a missed `principals` publication or a credential changed by the shell
 * (another process) could leak to the re-check period, and spreads long-lived streams over
 * instances after a deploy.
 */
export const STREAM_MAX_LIFETIME_MS = 15 * 60_000;

/** Who opened a stream, and how to ask whether their credentials still hold. */
export interface StreamCaller {
  principal: Principal;
  /** False (or a failure) ends the stream with reason "credentials". */
  stillValid(): Promise<boolean>;
}

/** Whether a `principals` publication names this caller. */
export function concerns(change: Omit<PrincipalsChanged, "type">, principal: Principal): boolean {
  switch (change.kind) {
    case "key":
      return principal.kind === "key" && principal.id === change.id;
    case "session":
      return principal.sessionId === change.id;
    case "sessions":
      return principal.kind === "person" && principal.personId === change.id;
    case "person":
      return principal.personId === change.id;
  }
}

/** What one stream may hold unread before it is dropped: many notices, never unbounded. */
export const STREAM_BUFFER_BYTES = 64 * 1024;

/**
 * A `threads` notice carries rows when it names at most LIVE_ROWS_MAX threads and its UTF-8 text
 * stays within LIVE_ROWS_BYTES, and only to a stream with at least half its buffer free: a reader
 * already behind (a slow link) gets keys only, which boards read by key. So rows never fill a
 * reader's buffer to the point of being dropped.
 *
 * A publication naming more threads than one notice may carry, up to LIVE_ROWS_PUBLICATION_MAX,
 * goes out as several notices, each within both bounds (a thread whose row alone is larger goes
 * in a notice of its own, keys only): on a busy fleet the coalescing window gathers a few dozen
 * changed threads, and a board reading them by key pays a round trip through a busy server (the
 * board bench: 150–220 ms, against none when the notice carries them). A larger burst goes out
 * as one notice of keys only.
 */
export const LIVE_ROWS_MAX = 40;
export const LIVE_ROWS_PUBLICATION_MAX = 3 * LIVE_ROWS_MAX;
const LIVE_ROWS_BYTES = 24 * 1024;

/** One `threads` notice as every stream sends it: with rows when they qualify, else keys only. */
interface ThreadsNotice {
  full: string;
  keysOnly: string;
}

/**
 * Each publication's `threads` notices, in order, as every stream sends them: built once, by the
 * first stream to send them. Each part is the notices of up to LIVE_ROWS_MAX of its threads.
 */
const noticeTexts = new WeakMap<ThreadsChanged, Promise<ThreadsNotice[]>[]>();

/**
 * The rows' reads, one part at a time in publication order, with a turn of the event loop
 * between two parts of a publication (ingestion runs between them): streams send an earlier
 * publication first, so its rows must never be read after a later one's (a row would go back in
 * time on the board). A part whose turn comes after a newer publication was made goes keys only,
 * so the reads never fall behind by more than one publication (slow reads on PostgreSQL).
 * Process-wide (lib/process-state.ts), as the streams' admission is.
 */
interface RowReads {
  queue: Promise<unknown>;
  published: number;
}
const rowReads = shared("streamRowReads", (): RowReads => ({ queue: Promise.resolve(), published: 0 }));

function threadsNotices(message: ThreadsChanged): Promise<ThreadsNotice[]>[] {
  let parts = noticeTexts.get(message);
  if (parts) return parts;
  parts = [];
  if (message.threads.length > LIVE_ROWS_PUBLICATION_MAX) {
    parts.push(Promise.resolve([keysOnlyNotice(message.threads)]));
  } else {
    const publication = ++rowReads.published;
    // In key order, the order GET /api/v1/threads?keys=… answers rows in.
    const threads = message.threads.toSorted((a, b) => a.key - b.key);
    for (let i = 0; i < threads.length; i += LIVE_ROWS_MAX) {
      const named = threads.slice(i, i + LIVE_ROWS_MAX);
      const part = rowReads.queue
        .then(() => (i === 0 ? undefined : new Promise((resolve) => setImmediate(resolve))))
        .then(() => (rowReads.published === publication ? withRows(named) : [keysOnlyNotice(named)]))
        .catch(() => [keysOnlyNotice(named)]);
      rowReads.queue = part;
      parts.push(part);
    }
  }
  noticeTexts.set(message, parts);
  return parts;
}

type Changes = ThreadsChanged["threads"];
const sse = (json: string) => `event: threads\ndata: ${json}\n\n`;
const keysOnly = (threads: Changes) => sse(JSON.stringify({ threads, serverTime: new Date().toISOString() } satisfies StreamThreads));
const keysOnlyNotice = (threads: Changes): ThreadsNotice => {
  const keys = keysOnly(threads);
  return { full: keys, keysOnly: keys };
};

/**
 * The notices of these threads (in key order) with their rows, packed in order into notices that
 * each fit LIVE_ROWS_BYTES, every row serialized once: a thread whose row alone does not fit goes
 * in a notice of its own, keys only.
 */
async function withRows(threads: Changes): Promise<ThreadsNotice[]> {
  const now = Date.now();
  // The unfiltered board's filter: a key without a row is not on that board.
  const rows = await threadRows(threads.map((change) => change.key), now, {});
  const serverTime = JSON.stringify(new Date(now).toISOString());
  const rowTexts = new Map(rows.map((row) => [row.key, JSON.stringify(row)]));
  // What JSON.stringify({ threads, rows, serverTime } satisfies StreamThreads) writes, from the pieces.
  const text = (named: Changes, texts: string[]) => sse(`{"threads":${JSON.stringify(named)},"rows":[${texts.join(",")}],"serverTime":${serverTime}}`);
  const emptyBytes = Buffer.byteLength(text([], []));
  const notices: ThreadsNotice[] = [];
  let named: Changes = [];
  let texts: string[] = [];
  let bytes = emptyBytes;
  const close = () => {
    if (named.length > 0) notices.push({ full: text(named, texts), keysOnly: keysOnly(named) });
    named = [];
    texts = [];
    bytes = emptyBytes;
  };
  for (const change of threads) {
    const row = rowTexts.get(change.key);
    // Each with its comma.
    const size = Buffer.byteLength(JSON.stringify(change)) + 1 + (row === undefined ? 0 : Buffer.byteLength(row) + 1);
    if (emptyBytes + size > LIVE_ROWS_BYTES) {
      close();
      notices.push(keysOnlyNotice([change]));
      continue;
    }
    if (bytes + size > LIVE_ROWS_BYTES) close();
    named.push(change);
    if (row !== undefined) texts.push(row);
    bytes += size;
  }
  close();
  return notices;
}

/** Tells the browser that anything may have changed: it refetches what it shows. */
const hello = () => `event: hello\ndata: ${JSON.stringify({ serverTime: new Date().toISOString() })}\n\n`;

/** A refused stream is told to come back after this long. */
const RETRY_AFTER_S = 5;

interface Admission {
  total: number;
  byClient: Map<string, number>;
}

const admission = shared("streams", (): Admission => ({ total: 0, byClient: new Map() }));

/** Open streams, in total and for one client (tests and metrics). */
export function openStreams(client?: string): number {
  return client === undefined ? admission.total : (admission.byClient.get(client) ?? 0);
}


/** Takes a stream slot for the client, or null when a cap is reached. */
function admit(client: string): (() => void) | null {
  const { perClient, total } = streamLimits();
  const mine = admission.byClient.get(client) ?? 0;
  if (admission.total >= total || mine >= perClient) return null;
  admission.total++;
  admission.byClient.set(client, mine + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    admission.total--;
    const left = (admission.byClient.get(client) ?? 1) - 1;
    if (left > 0) admission.byClient.set(client, left);
    else admission.byClient.delete(client);
  };
}

export function liveStream(request: Request, caller: StreamCaller): Response {
  const client = clientAddress(request.headers);
  const release = admit(client);
  if (!release) {
    const { perClient, total } = streamLimits();
    const response = problem(
      429,
      "Too Many Requests",
      `Too many open live streams (at most ${perClient} per client and ${total} in all); close a tab or retry after ${RETRY_AFTER_S} s.`,
    );
    response.headers.set("retry-after", String(RETRY_AFTER_S));
    return response;
  }
  const encoder = new TextEncoder();
  let cleanup = () => {};
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        let heartbeat: NodeJS.Timeout | undefined;
        let recheck: NodeJS.Timeout | undefined;
        let lifetime: NodeJS.Timeout | undefined;
        let unsubscribe = () => {};
        let ended = false;
        cleanup = () => {
          if (ended) return;
          ended = true;
          clearInterval(heartbeat);
          clearInterval(recheck);
          clearTimeout(lifetime);
          unsubscribe();
          release();
        };
        const send = (text: string) => {
          if (ended) return;
          // The consumer stopped reading: drop it (discarding what is queued) rather than buffer.
          if ((controller.desiredSize ?? 1) <= 0) {
            cleanup();
            controller.error(new Error("live stream dropped: the client stopped reading"));
            return;
          }
          try {
            controller.enqueue(encoder.encode(text));
          } catch {
            cleanup();
          }
        };
        send(`retry: 2000\n${hello()}`);
        // Notices go out in publication order, each once its text is ready.
        let sending = Promise.resolve();
        const offThreads = subscribe("threads", (message) => {
          const parts = threadsNotices(message);
          // A part never rejects (it falls back to keys only); should sending throw, later notices still go.
          sending = sending
            .then(async () => {
              for (const part of parts) {
                for (const notice of await part) send((controller.desiredSize ?? 0) >= STREAM_BUFFER_BYTES / 2 ? notice.full : notice.keysOnly);
              }
            })
            .catch(() => {});
        });
        // "Refetch" notices carry only the server's time.
        const offNotices = (["limits", "incidents"] as const).map((type) =>
          subscribe(type, () => send(`event: ${type}\ndata: ${JSON.stringify({ serverTime: new Date().toISOString() })}\n\n`)),
        );
        // Publications of other instances may have been missed: the browser refetches everything,
        // as after its own reconnect (a second hello).
        const offResync = subscribe("resync", () => send(hello()));
        unsubscribe = () => {
          offThreads();
          for (const off of offNotices) off();
          offResync();
        };
        /** The last event says why, then the stream closes: the browser reconnects. */
        const end = (reason: "credentials" | "lifetime") => {
          send(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`);
          if (ended) return;
          cleanup();
          try {
            controller.close();
          } catch {
            // already closed
          }
        };
        const offPrincipals = subscribe("principals", (change) => {
          if (concerns(change, caller.principal)) end("credentials");
        });
        const offOthers = unsubscribe;
        unsubscribe = () => {
          offOthers();
          offPrincipals();
        };
        heartbeat = setInterval(() => send(`: heartbeat ${Date.now()}\n\n`), HEARTBEAT_MS);
        heartbeat.unref?.();
        // One question at a time: a slow store does not pile them up.
        let asking = false;
        recheck = setInterval(() => {
          if (asking || ended) return;
          asking = true;
          caller
            .stillValid()
            .catch(() => false)
            .then((valid) => {
              asking = false;
              if (!valid) end("credentials");
            });
        }, PRINCIPAL_RECHECK_MS);
        recheck.unref?.();
        lifetime = setTimeout(() => end("lifetime"), STREAM_MAX_LIFETIME_MS);
        lifetime.unref?.();
        request.signal.addEventListener("abort", () => {
          const wasOpen = !ended;
          cleanup();
          if (!wasOpen) return;
          try {
            controller.close();
          } catch {
            // already closed
          }
        });
      },
      cancel() {
        cleanup();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: STREAM_BUFFER_BYTES }),
  );
  return new Response(stream, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", connection: "keep-alive" },
  });
}
