// Which listening interfaces (HOST) are reachable from this machine only. Plain JavaScript so
// `npm start` can decide before anything is compiled; lib/server/edge.ts uses the same rule.
import { isIP } from "node:net";

/** Whether a listening interface (HOST) is reachable from this machine only. */
export function isLoopbackInterface(host) {
  const name = host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return name === "localhost" || name === "::1" || (isIP(name) === 4 && name.startsWith("127."));
}

/** Whether HOST means every interface (then loopback is one of them). */
export function isWildcardInterface(host) {
  const name = host.trim().replace(/^\[(.*)\]$/, "$1");
  return name === "0.0.0.0" || name === "::";
}
