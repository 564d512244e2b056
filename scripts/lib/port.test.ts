import fs from "node:fs";
import net from "node:net";
import { describe, expect, it } from "vitest";
import { freePort } from "./port.mjs";

describe("freePort", () => {
  it("is a port a server can listen on, below the kernel's range for outgoing connections' local ports", async () => {
    const [low] = fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    for (let i = 0; i < 5; i++) {
      const port = await freePort();
      expect(port).toBeLessThan(low);
      const server = net.createServer();
      await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", resolve));
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
