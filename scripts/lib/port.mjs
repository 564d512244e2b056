// A free TCP port on 127.0.0.1 for a server a test or a benchmark starts (plain JavaScript, so
// `npm test` can use it before anything is compiled; port.d.mts types it for TypeScript).
import fs from "node:fs";
import net from "node:net";

/**
 * Ports are taken below the kernel's ephemeral range (ip_local_port_range, from which it gives
 * every outgoing connection its local port): a port found free there and then listened on a
 * moment later could meanwhile have become the local end of some connection — a database
 * client's, say — and the server's listen would fail (EADDRINUSE). Below that range only
 * another listener can take it.
 */
const FIRST = 20_000;
const TRIES = 64;

function ephemeralStart() {
  try {
    const [low] = fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    return Number.isInteger(low) && low > FIRST + 1_000 ? low : null;
  } catch {
    return null;
  }
}

/** Whether `port` (0: any) can be listened on now; the port listened on, or null. */
function tryListen(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once("error", () => resolve(null));
    server.listen(port, "127.0.0.1", () => {
      const { port: taken } = server.address();
      server.close(() => resolve(taken));
    });
  });
}

export async function freePort() {
  const end = ephemeralStart();
  if (end !== null) {
    for (let i = 0; i < TRIES; i++) {
      const port = await tryListen(FIRST + Math.floor(Math.random() * (end - FIRST)));
      if (port !== null) return port;
    }
  }
  const port = await tryListen(0);
  if (port === null) throw new Error("no free TCP port on 127.0.0.1");
  return port;
}
