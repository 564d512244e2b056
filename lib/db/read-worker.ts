import { parentPort, workerData } from "node:worker_threads";
import { openReadOnly } from "./client";
import { finishRead, EXPORTS, READS, type FromWorker, type ToWorker } from "./reads";

/**
 * The read worker: a thread with its own read-only connection to the database file (WAL lets it
 * read while the server's thread writes) that runs the heavy reads of reads.ts, so the thread
 * that takes requests and ingests never waits on one. lib/server/off-thread.ts starts it from
 * the file the prepare step builds (scripts/lib/prepare.mjs), outside Next's bundler.
 *
 * Messages are handled one at a time: a read runs whole, an export about PULL_BYTES per pull,
 * so a long export lets other reads in between its pages.
 */

const { sql } = openReadOnly((workerData as { file: string }).file);
const port = parentPort!;
const streams = new Map<number, ReadableStreamDefaultReader<Uint8Array>>();

port.on("message", async (message: ToWorker) => {
  const { id } = message;
  const reply = (answer: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(answer, transfer);
  try {
    if ("read" in message) {
      const read = READS[message.read] as (...args: unknown[]) => unknown;
      reply({ id, value: await finishRead(sql.transaction(() => read(...message.args))()) });
    } else if ("open" in message) {
      const body = EXPORTS[message.open](message.args as never);
      streams.set(id, body.getReader());
    } else if ("pull" in message) {
      const chunk = await gathered(streams.get(id)!);
      if (!chunk) streams.delete(id);
      reply({ id, chunk }, chunk ? [chunk.buffer as ArrayBuffer] : []);
    } else {
      const reader = streams.get(id);
      streams.delete(id);
      await reader?.cancel();
    }
  } catch (error) {
    streams.delete(id);
    reply({ id, error: error instanceof Error ? error.message : String(error) });
  }
});

/**
 * About this many bytes go to the server's thread per pull: each answer costs that thread a
 * message and a socket write, and zlib hands out 16 KB at a time.
 */
const PULL_BYTES = 64 * 1024;

/** The stream's next chunks, up to about PULL_BYTES, over a buffer of their own; null at its end. */
async function gathered(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<Uint8Array | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < PULL_BYTES) {
    const next = await reader.read();
    if (next.done) break;
    chunks.push(next.value);
    size += next.value.byteLength;
  }
  if (chunks.length === 0) return null;
  if (chunks.length === 1) return owning(chunks[0]);
  const joined = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    joined.set(chunk, at);
    at += chunk.byteLength;
  }
  return joined;
}

/** The chunk over a buffer of its own, so transferring it detaches nothing else (zlib's output shares buffers between chunks). */
function owning(chunk: Uint8Array): Uint8Array {
  return chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength ? chunk : new Uint8Array(chunk);
}
