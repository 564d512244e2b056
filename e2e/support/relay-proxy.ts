/**
 * A TCP forwarder on a fixed 127.0.0.1 port in front of the radar server, for outage tests:
 * `down()` stops listening (clients get ECONNREFUSED, as with a dead server), `up(port)` listens
 * again on the same port and forwards to the (restarted) server's new port, and
 * `dropNextResponses(n)` lets requests through but cuts the connection when the server answers
 * — the server committed, the client never heard back.
 */
import net from "node:net";

export interface TcpProxy {
  port: number;
  url: string;
  down(): Promise<void>;
  up(targetPort?: number): Promise<void>;
  dropNextResponses(count: number): void;
  /** Responses cut so far. */
  dropped: number;
  close(): Promise<void>;
}

/**
 * The server behind it answers only to the hosts it knows (its own port and RADAR_PUBLIC_URL):
 * start the proxy first, start the server with `RADAR_PUBLIC_URL: proxy.url`, then `up(its port)`.
 */
export async function startTcpProxy(targetPort = 0): Promise<TcpProxy> {
  let target = targetPort;
  let dropBudget = 0;
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;

  const handle = (client: net.Socket) => {
    sockets.add(client);
    const upstream = net.connect(target, "127.0.0.1");
    sockets.add(upstream);
    let drop = false;
    client.on("data", (chunk) => {
      // A new request on this connection decides whether its answer is cut.
      if (!drop && dropBudget > 0 && /^(POST|GET) /.test(chunk.toString("latin1", 0, 5))) {
        drop = true;
        dropBudget -= 1;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (drop) {
        proxy.dropped += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", closeBoth);
    upstream.on("close", closeBoth);
    client.on("error", closeBoth);
    upstream.on("error", closeBoth);
  };

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server = net.createServer(handle);
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve((server!.address() as net.AddressInfo).port));
    });

  const port = await listen(0);
  const proxy: TcpProxy = {
    port,
    url: `http://127.0.0.1:${port}`,
    dropped: 0,
    async down() {
      for (const s of sockets) s.destroy();
      sockets.clear();
      const s = server;
      server = null;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    async up(targetPortNew) {
      if (targetPortNew) target = targetPortNew;
      if (!server) await listen(port);
    },
    dropNextResponses(count) {
      dropBudget = count;
    },
    async close() {
      await proxy.down();
    },
  };
  return proxy;
}
