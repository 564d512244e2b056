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

/** A path on this server (never `//host` or `/\host`): where sign-in may send someone afterwards. */
export const localPath = z.string().max(2000).regex(/^\/(?![/\\])/, "a path on this server").catch("/");

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
