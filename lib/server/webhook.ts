import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { allowListText, checkWebhookUrl, refusedAddresses } from "@/lib/alerts/address";
import type { AttemptResult } from "@/lib/alerts/delivery";

/**
 * Calling alert webhooks without becoming a way into internal services: the URL is checked
 * against the allow-list when a destination is saved, and every delivery checks the addresses
 * its host resolves to at the moment it connects (the connection uses exactly the addresses that
 * were checked, so a DNS answer that changes in between cannot slip a private address through).
 */

/** Why a destination URL may not be saved, or null when it may (its host resolved now). */
export async function destinationProblem(url: string, allow: readonly string[]): Promise<string | null> {
  const checked = checkWebhookUrl(url, allow);
  if (!checked.ok) return checked.reason;
  const host = checked.url.hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await dns.promises.lookup(host, { all: true })).map((a) => a.address);
  } catch (error) {
    return `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  const refused = refusedAddresses(host, addresses, allow);
  return refused.length ? refusedReason(host, refused, allow) : null;
}

const refusedReason = (host: string, refused: string[], allow: readonly string[]) =>
  `${host} resolves to ${refused.join(", ")}: a loopback or private address, refused unless RADAR_WEBHOOK_ALLOW lists ${host} by name (it is ${allowListText(allow)})`;

/** Resolves like the default lookup, refusing private addresses the allow-list does not name. */
function guardedLookup(allow: readonly string[]): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "", 4);
      const list = addresses as dns.LookupAddress[];
      const refused = refusedAddresses(hostname, list.map((a) => a.address), allow);
      if (refused.length) return callback(Object.assign(new Error(refusedReason(hostname, refused, allow)), { code: "ERADARREFUSED" }), "", 4);
      if ((options as dns.LookupOptions).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

/** The most of an answer's body kept (for the error shown on the Alerts page). */
const ANSWER_BYTES = 512;

/** POSTs one delivery; never throws and never waits longer than `timeoutMs`. */
export function postWebhook(target: string, body: string, headers: Record<string, string>, options: { allow: readonly string[]; timeoutMs: number }): Promise<AttemptResult> {
  const checked = checkWebhookUrl(target, options.allow);
  if (!checked.ok) return Promise.resolve({ status: null, error: checked.reason });
  const url = checked.url;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  // An IP literal is never looked up: check it here.
  if (isIP(host)) {
    const refused = refusedAddresses(host, [host], options.allow);
    if (refused.length) return Promise.resolve({ status: null, error: refusedReason(host, refused, options.allow) });
  }
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = (url.protocol === "https:" ? https : http).request(
      url,
      {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "retry-radar-alerts", "content-length": Buffer.byteLength(body), ...headers },
        lookup: guardedLookup(options.allow),
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          if (size < ANSWER_BYTES) chunks.push(chunk);
          size += chunk.length;
        });
        response.on("end", () => {
          const status = response.statusCode ?? null;
          const text = Buffer.concat(chunks).toString("utf8").slice(0, ANSWER_BYTES).trim();
          const retryAfter = response.headers["retry-after"] ?? null;
          finish({ status, retryAfter, error: status !== null && status >= 300 && text ? text : null });
        });
        response.on("error", (error) => finish({ status: null, error: error.message }));
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      finish({ status: null, error: `no answer within ${options.timeoutMs} ms` });
    }, options.timeoutMs);
    request.on("error", (error) => finish({ status: null, error: error.message }));
    request.end(body);
  });
}
