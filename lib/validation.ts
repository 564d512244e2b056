import { z } from "zod";
import { EXPORT_FORMATS } from "@/lib/insights/stream";
import { MAX_STORED_INT } from "@/lib/ingest/limits";

// In the browser zod must not probe for eval (its faster object parsing): the pages' CSP forbids
// eval, and the browser reports even a caught probe as a violation. The server keeps it.
if (typeof window !== "undefined") z.config({ jitless: true });

/** One line naming where input was wrong and why: "reason: Too big: expected string to have <=500 characters". */
export function describeZodError(error: z.ZodError): string {
  const issue = error.issues[0];
  // Field names only: an array index (a repeated URL parameter) says nothing to a person.
  const where = issue.path.filter((p) => typeof p === "string").join(".");
  return where ? `${where}: ${issue.message}` : issue.message;
}

/** `?format=` of every export route. */
export const exportFormatQuery = z.object({
  format: z.enum(EXPORT_FORMATS, { error: `expected one of ${EXPORT_FORMATS.join(", ")}` }).default("json"),
});

/**
 * Control characters (C0 and DEL) and backslashes, raw or percent-encoded: a browser drops tabs and
 * newlines from a URL and reads `\` as `/`, so `/%09/host` or `/\host` can reach it as `//host`.
 */
const UNSAFE_IN_TARGET = /[\u0000-\u001f\u007f\\]|%(?:[01][0-9a-f]|7f|5c)/i;
/**
 * What a target is resolved against. Only its path, query and fragment are handed back, so any
 * origin of our own serves: a target that resolves anywhere else named a host or scheme of its own.
 */
const RESOLVED_AGAINST = "http://radar.invalid";

/**
 * `target` as a path on this server (pathname, query and fragment, normalised by the URL parser),
 * or null when a browser could read it as another origin. It must start with `/`, hold no control
 * character or backslash, and resolve to our origin with a path that does not itself start with
 * `//` (`/..//host` resolves to `//host`) — and so must its percent-decoded form, for whatever
 * decodes it once more on the way (`/%2F%2Fhost`).
 */
export function sameOriginPath(target: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(target);
  } catch {
    return null;
  }
  let kept: string | null = null;
  for (const form of [target, decoded]) {
    if (!form.startsWith("/") || UNSAFE_IN_TARGET.test(form)) return null;
    let url: URL;
    try {
      url = new URL(form, RESOLVED_AGAINST);
    } catch {
      return null;
    }
    if (url.origin !== RESOLVED_AGAINST || url.pathname.startsWith("//")) return null;
    kept ??= url.pathname + url.search + url.hash;
  }
  return kept;
}

/** A path on this server (see sameOriginPath): where sign-in may send someone afterwards; `/` when it is not one. */
export const localPath = z
  .string()
  .max(2000)
  .transform((target, context) => {
    const path = sameOriginPath(target);
    if (path === null) context.issues.push({ code: "custom", message: "a path on this server", input: target });
    return path ?? "/";
  })
  .catch("/");

/**
 * A positive integer path or query parameter naming a thread (its key) or a page: at most what
 * both stores' 32-bit ids hold, so a larger one is this 400 on both, not a database error on
 * PostgreSQL.
 */
export const positiveId = (name: string) => {
  const message = `${name}: expected a positive integer up to ${MAX_STORED_INT}.`;
  return z.coerce.number({ error: message }).pipe(z.number().int(message).min(1, message).max(MAX_STORED_INT, message));
};

/**
 * An event's seq (its id): 64-bit on both stores (PostgreSQL's Event ids are BIGINT), so any
 * positive integer a number holds exactly.
 */
export const positiveSeq = (name: string) => {
  const message = `${name}: expected a positive integer up to ${Number.MAX_SAFE_INTEGER}.`;
  return z.coerce.number({ error: message }).pipe(z.number().int(message).min(1, message).max(Number.MAX_SAFE_INTEGER, message));
};
