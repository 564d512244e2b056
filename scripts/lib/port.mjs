// A free TCP port on 127.0.0.1 for a server a test or a benchmark starts (plain JavaScript, so
// `npm test` can use it before anything is compiled; port.d.mts types it for TypeScript).
import net from "node:net";

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
