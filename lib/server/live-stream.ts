import { streamLimits } from "@/lib/config";
import { threadRows } from "@/lib/db/threads";
import type { StreamThreads } from "@/lib/wire/types";
import { subscribe, type ThreadsChanged } from "./bus";
import { clientAddress } from "./edge";
import { problem } from "./http";

/**
 * The UI's server-sent event stream (GET /api/v1/stream): `threads` announces which threads
 * changed, and when few did, carries their rows as the unfiltered board shows them, read once per
 * publication whatever the number of open streams (boards of that filter then need no request;
 * others read their rows by key); a comment heartbeat keeps proxies from closing it.
 *
 * It cannot be abused: streams are capped per client address and in total (429 with
 * Retry-After beyond), and a consumer that stops reading is dropped once STREAM_BUFFER_BYTES are
 * queued for it, instead of buffering every publication in server memory.
 */
const HEARTBEAT_MS = 15_000;

/** What one stream may hold unread before it is dropped: many notices, never unbounded. */
export const STREAM_BUFFER_BYTES = 64 * 1024;

/**
 * A `threads` notice carries rows when it names at most this many threads and its UTF-8 text stays
 * within LIVE_ROWS_BYTES, and only to a stream with at least half its buffer free: a burst, or a
 * reader already behind (a slow link), gets keys only, which boards read by key. So rows never
 * fill a reader's buffer to the point of being dropped.
 */
export const LIVE_ROWS_MAX = 40;
const LIVE_ROWS_BYTES = 24 * 1024;

interface ThreadsNotice {
  /** With rows when they qualify, else keys only. */
  full: Promise<string>;
  keysOnly: string;
}

/** Each publication's `threads` message, as every stream sends it: built once, by the first stream to send it. */
const noticeTexts = new WeakMap<ThreadsChanged, ThreadsNotice>();

function threadsNotice(message: ThreadsChanged): ThreadsNotice {
  let notice = noticeTexts.get(message);
  if (!notice) {
    const keys = keysOnly(message);
    notice = { full: withRows(message, keys).catch(() => keys), keysOnly: keys };
    noticeTexts.set(message, notice);
  }
  return notice;
}

const sse = (data: StreamThreads) => `event: threads\ndata: ${JSON.stringify(data)}\n\n`;
const keysOnly = (message: ThreadsChanged) => sse({ threads: message.threads, serverTime: new Date().toISOString() });

async function withRows(message: ThreadsChanged, keys: string): Promise<string> {
  if (message.threads.length > LIVE_ROWS_MAX) return keys;
  const now = Date.now();
  // The unfiltered board's filter: a key without a row is not on that board.
  const rows = await threadRows(message.threads.map((change) => change.key), now, {});
  const text = sse({ threads: message.threads, rows, serverTime: new Date(now).toISOString() });
  return Buffer.byteLength(text) <= LIVE_ROWS_BYTES ? text : keys;
}

/** Tells the browser that anything may have changed: it refetches what it shows. */
const hello = () => `event: hello\ndata: ${JSON.stringify({ serverTime: new Date().toISOString() })}\n\n`;

/** A refused stream is told to come back after this long. */
const RETRY_AFTER_S = 5;

interface Admission {
  total: number;
  byClient: Map<string, number>;
}

const globalForStreams = globalThis as unknown as { __radarStreams?: Admission };
const admission = (globalForStreams.__radarStreams ??= { total: 0, byClient: new Map() });

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

export function liveStream(request: Request): Response {
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
        let unsubscribe = () => {};
        let ended = false;
        cleanup = () => {
          if (ended) return;
          ended = true;
          clearInterval(heartbeat);
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
          const notice = threadsNotice(message);
          sending = sending.then(async () => {
            const full = await notice.full;
            send((controller.desiredSize ?? 0) >= STREAM_BUFFER_BYTES / 2 ? full : notice.keysOnly);
          });
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
        heartbeat = setInterval(() => send(`: heartbeat ${Date.now()}\n\n`), HEARTBEAT_MS);
        heartbeat.unref?.();
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
