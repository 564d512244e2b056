import { subscribe } from "@/lib/server/bus";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

const HEARTBEAT_MS = 15_000;

/**
 * Server-sent events for the UI: `threads` announces which threads changed (the client
 * refetches what it shows); a comment heartbeat keeps proxies from closing the stream.
 */
export const GET = route({ access: "viewer" }, ({ request }) => {
  const encoder = new TextEncoder();
  let cleanup = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          cleanup();
        }
      };
      send(`retry: 2000\nevent: hello\ndata: ${JSON.stringify({ serverTime: new Date().toISOString() })}\n\n`);
      const unsubscribe = subscribe("threads", (message) => {
        send(`event: threads\ndata: ${JSON.stringify({ threads: message.threads, serverTime: new Date().toISOString() })}\n\n`);
      });
      const heartbeat = setInterval(() => send(`: heartbeat ${Date.now()}\n\n`), HEARTBEAT_MS);
      cleanup = () => {
        clearInterval(heartbeat);
        unsubscribe();
      };
      request.signal.addEventListener("abort", () => {
        cleanup();
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
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", connection: "keep-alive" },
  });
});
