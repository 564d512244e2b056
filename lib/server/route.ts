import type { z } from "zod";
import { describeZodError } from "@/lib/validation";
import { authorize, type Access, type CallerFor } from "./auth";
import { isStorageFull } from "@/lib/db/storage-full";
import { BodyEncodingError, BodyParseError, BodyTooLargeError, closingConnection, problem, readBody, readJsonBody, withRetryAfter } from "./http";
import { edgeSettings, refuseForeignHost } from "./edge";
import { resolveThread } from "./resolve-thread";
import { nulError, nulPath } from "@/lib/ingest/bound";

/**
 * Every HTTP route is a plain function over the Web Request/Response, declared once: who may
 * call it, its path parameters, query and body schemas, and whether it names a thread. The
 * wrapper answers every refusal with problem+json before the handler runs, so a handler only
 * does its work. Next serves these; any other HTTP server can call them the same way.
 */
export interface RouteSpec<A extends Access, P, Q, B> {
  access: A;
  /** Path parameters; a mismatch answers `status` with the first issue's message. */
  params?: { schema: z.ZodType<P>; status: 400 | 404; title: string };
  /** The query string (first value of each name); a mismatch is a 400 titled `title`. */
  query?: { schema: z.ZodType<Q>; title: string; detail?: string };
  /** A JSON body within `maxBytes`; `emptyAs` accepts an empty body as that value. */
  body?: { schema: z.ZodType<B>; maxBytes: number; title: string; example: string; emptyAs?: unknown };
  /**
   * The raw body text (and its bytes, for binary formats) within `maxBytes` (formats the handler
   * parses itself); with `gzip`, a `Content-Encoding: gzip` body is decompressed within the same
   * `maxBytes`.
   */
  text?: { maxBytes: number; hint?: string; gzip?: boolean };
  /** `params.id` (with `?source=`) names a thread: resolved to its key, or 404/409. */
  thread?: true;
}

export type RouteCall<A extends Access, P, Q, B> = CallerFor<A> & {
  request: Request;
  params: P;
  query: Q;
  body: B;
  /** The body as UTF-8 text, decoded when first read (a binary body need never be). */
  text: string;
  /** The body as read (routes that declare `text`), decompressed. */
  bytes: Uint8Array;
  /** The resolved thread's internal key (routes that declare `thread`). */
  thread: number;
  search: URLSearchParams;
  /** When the request arrived (epoch ms). */
  now: number;
};

/** A full disk needs a person: clients should back off for a while, not hammer it. */
const STORAGE_FULL_RETRY_AFTER_S = 60;

type RouteContext = { params?: Promise<Record<string, string>> };

export function route<A extends Access, P = Record<string, string>, Q = undefined, B = undefined>(
  spec: RouteSpec<A, P, Q, B>,
  handler: (call: RouteCall<A, P, Q, B>) => Promise<Response> | Response,
): (request: Request, context?: RouteContext) => Promise<Response> {
  return async (request, context) => {
    // Requests with a body skip proxy.ts (which would buffer them): the Host is checked here too.
    const misdirected = refuseForeignHost(request.headers.get("host"), edgeSettings());
    if (misdirected) return misdirected;
    const now = Date.now();
    const authorized = await authorize(spec.access, request);
    if (!authorized.ok) return authorized.response;
    const rawParams = (await context?.params) ?? {};
    const search = new URL(request.url).searchParams;
    // No stored id or name holds a NUL: a path (or thread source) naming one names nothing.
    if (nulPath(rawParams) !== null || (spec.thread && nulPath(search.get("source")) !== null)) {
      return problem(404, "Not found", "Nothing here: the path or its source contains a NUL character (U+0000).");
    }
    let params = rawParams as P;
    if (spec.params) {
      const parsed = spec.params.schema.safeParse(rawParams);
      if (!parsed.success) return problem(spec.params.status, spec.params.title, parsed.error.issues[0].message);
      params = parsed.data;
    }
    // Nor does any other stored text, and PostgreSQL refuses a NUL in any text it is given: a
    // query holding one is refused on every route, whatever its handler reads of it.
    const nulAt = nulInQuery(search);
    if (nulAt !== null) return problem(400, spec.query?.title ?? "Invalid query", nulError(nulAt));
    let query = undefined as Q;
    if (spec.query) {
      const values = firstValues(search);
      const parsed = spec.query.schema.safeParse(values);
      if (!parsed.success) return problem(400, spec.query.title, spec.query.detail ?? describeZodError(parsed.error));
      query = parsed.data;
    }
    let body = undefined as B;
    let bytes: Buffer = Buffer.alloc(0);
    try {
      if (spec.body) {
        const json = await readJsonBody(request, spec.body.maxBytes, spec.body.emptyAs);
        const nulInBody = nulPath(json);
        if (nulInBody !== null) return problem(400, spec.body.title, nulError(nulInBody));
        const parsed = spec.body.schema.safeParse(json);
        if (!parsed.success) return problem(400, spec.body.title, describeZodError(parsed.error));
        body = parsed.data;
      } else if (spec.text) {
        bytes = await readBody(request, spec.text.maxBytes, { gzip: spec.text.gzip });
      }
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        const limit = spec.body?.maxBytes ?? spec.text?.maxBytes;
        const hint = spec.text?.hint ? `; ${spec.text.hint}` : "";
        return closingConnection(problem(413, "Payload Too Large", `The body is larger than ${limit} bytes${hint}.`));
      }
      if (error instanceof BodyEncodingError) return problem(error.status, error.status === 415 ? "Unsupported Media Type" : "Unreadable body", error.message);
      if (error instanceof BodyParseError) return problem(400, "Unparseable body", `Expected ${spec.body!.example}.`);
      throw error;
    }
    let thread = 0;
    if (spec.thread) {
      const resolved = await resolveThread(rawParams.id, search.get("source"));
      if (!resolved.ok) {
        return problem(resolved.status, resolved.status === 404 ? "Not found" : "Ambiguous thread id", resolved.error, { candidates: resolved.candidates });
      }
      thread = resolved.key;
    }
    try {
      // The text only when the handler reads it: a protobuf body is never decoded as UTF-8.
      let text: string | undefined;
      const call = {
        ...authorized.caller,
        request,
        params,
        query,
        body,
        bytes,
        thread,
        search,
        now,
        get text() {
          return (text ??= bytes.toString("utf8"));
        },
      };
      return await handler(call);
    } catch (error) {
      if (!isStorageFull(error)) throw error;
      process.stderr.write(`[radar] the database is full: ${request.method} ${new URL(request.url).pathname} refused with 503\n`);
      return withRetryAfter(
        problem(503, "Storage full", "The server's disk is full; nothing of this request was stored. Retry later, once the operator has freed space."),
        STORAGE_FULL_RETRY_AFTER_S,
      );
    }
  };
}

/** A repeated query parameter counts once, by its first value. */
/** Which query parameter holds the first NUL (in its value, or in its name); null when none does. */
function nulInQuery(search: URLSearchParams): string | null {
  for (const [key, value] of search) {
    if (key.includes("\u0000")) return "a query parameter's name";
    if (value.includes("\u0000")) return key;
  }
  return null;
}

function firstValues(search: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of search) if (!(key in out)) out[key] = value;
  return out;
}
