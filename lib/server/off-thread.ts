import fs from "node:fs";
import path from "node:path";
import { db, serialized } from "@/lib/db/client";
import * as onPostgres from "@/lib/db/postgres/reads";
import { finishRead, EXPORTS, READS, type ExportName, type FromWorker, type ReadAnswer, type ReadName, type ToWorker } from "@/lib/db/reads";
import { currentStore } from "@/lib/db/store";
import { READ_WORKER_BUNDLE } from "./worker-bundles.mjs";
import { shared } from "@/lib/process-state";

/**
 * The heavy reads (lib/db/reads.ts: insights, exports, the metrics scrape) run on the read
 * worker (lib/db/read-worker.ts), so the thread that takes requests and ingests never stalls on
 * one: here they cost a message each way. Without a built worker (a server not started through
 * the prepare step) they run on this thread, queued with everything else, as a last resort.
 * On PostgreSQL they run here: the database does the work while this thread awaits it.
 */
// Next's bundler bundles the entry of every `new Worker` of node:worker_threads it can see (and
// ignores no comment there); this one is built by the prepare step, so Worker is taken out of its sight.
const { Worker } = process.getBuiltinModule("node:worker_threads");
type Worker = InstanceType<typeof Worker>;

interface Channel {
  worker: Worker;
  /** Who waits for the answer to each request id (an export's stream: its current pull). */
  waiting: Map<number, (answer: FromWorker) => void>;
  next: number;
  /** Why the worker stopped, once it did: an export it was serving gets this as its error. */
  stopped?: string;
}

// Process-wide (lib/process-state.ts), as the database is: one worker per process.
const sharedForReads = shared<{ reads?: Channel | null }>("reads", () => ({}));

function channel(): Channel | null {
  if (sharedForReads.reads !== undefined) return sharedForReads.reads;
  // Not a file for Next's build to trace: the prepare step writes it after that build.
  const bundle = path.join(/* turbopackIgnore: true */ process.cwd(), READ_WORKER_BUNDLE);
  if (!fs.existsSync(bundle)) {
    process.stderr.write(`[radar] ${READ_WORKER_BUNDLE} is missing (npm start builds it): heavy reads run on the ingest thread\n`);
    return (sharedForReads.reads = null);
  }
  // The server's connection opens (and migrates) the file first; the worker only reads it.
  const worker = new Worker(bundle, { workerData: { file: db().path } });
  const opened: Channel = { worker, waiting: new Map(), next: 1 };
  worker.on("message", (answer: FromWorker) => {
    const waiter = opened.waiting.get(answer.id);
    opened.waiting.delete(answer.id);
    waiter?.(answer);
  });
  // A worker that died is started again by the next read; whoever waited gets the error.
  const fail = (error: unknown) => {
    if (sharedForReads.reads === opened) sharedForReads.reads = undefined;
    const message = error instanceof Error ? error.message : `the read worker stopped (${String(error)})`;
    opened.stopped ??= message;
    for (const [id, waiter] of opened.waiting) waiter({ id, error: message });
    opened.waiting.clear();
  };
  worker.on("error", fail);
  worker.on("exit", fail);
  worker.unref();
  return (sharedForReads.reads = opened);
}

function ask(reads: Channel, request: ToWorker): Promise<FromWorker> {
  return new Promise((resolve) => {
    if (reads.stopped) return resolve({ id: request.id, error: reads.stopped });
    reads.waiting.set(request.id, resolve);
    reads.worker.postMessage(request);
  });
}

type Reads = typeof READS;

/** A read of lib/db/reads.ts by name, answered by the read worker. */
export async function read<N extends ReadName>(name: N, ...args: Parameters<Reads[N]>): Promise<ReadAnswer<N>> {
  type Value = ReadAnswer<N>;
  if (currentStore() === "postgres") return (onPostgres.READS[name] as (...a: unknown[]) => Promise<Value>)(...args);
  const run = READS[name] as (...a: unknown[]) => unknown;
  const reads = channel();
  // One snapshot, as on the read worker: the other thread commits meanwhile.
  if (!reads) return (await finishRead(await serialized(() => db().sql.transaction(() => run(...args))()))) as Value;
  const answer = await ask(reads, { id: reads.next++, read: name, args });
  if ("error" in answer) throw new Error(answer.error);
  return (answer as { value: Value }).value;
}

/**
 * An export of lib/db/reads.ts as a response, encoded by the read worker a chunk per pull, so
 * this event loop only passes bytes along (the listener gzips them as they go, by zlib off the
 * event loop). Without the worker (on PostgreSQL, or before it runs) it is encoded here.
 */
export function exportResponse<N extends ExportName>(name: N, args: Parameters<(typeof EXPORTS)[N]>[0], headers: HeadersInit): Response {
  return new Response(exportBody(name, args), { headers });
}

/** An export's body as encoded, never compressed here. */
export function exportBody<N extends ExportName>(name: N, args: Parameters<(typeof EXPORTS)[N]>[0]): ReadableStream<Uint8Array> {
  const reads = currentStore() === "postgres" ? null : channel();
  if (reads) return workerExport(reads, name, args);
  return currentStore() === "postgres" ? onPostgres.EXPORTS[name](args as never) : EXPORTS[name](args as never);
}

function workerExport<N extends ExportName>(reads: Channel, name: N, args: Parameters<(typeof EXPORTS)[N]>[0]): ReadableStream<Uint8Array> {
  const id = reads.next++;
  reads.worker.postMessage({ id, open: name, args } satisfies ToWorker);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const answer = await ask(reads, { id, pull: true });
      if ("error" in answer) controller.error(new Error(answer.error));
      // A Buffer over the transferred bytes, not a copy: should Next's compression take the body
      // (a client without gzip sends none of it), it copies any other Uint8Array byte by byte.
      else if ("chunk" in answer && answer.chunk) controller.enqueue(Buffer.from(answer.chunk.buffer, answer.chunk.byteOffset, answer.chunk.byteLength));
      else controller.close();
    },
    cancel() {
      reads.worker.postMessage({ id, cancel: true } satisfies ToWorker);
    },
  });
}
