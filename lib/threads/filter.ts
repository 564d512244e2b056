import { z } from "zod";
import { THREAD_STATUSES, TROUBLE_KINDS } from "@/lib/retry/types";
import { storedTimeError } from "@/lib/ingest/bound";
import { MAX_STORED_INT } from "@/lib/ingest/limits";
import { describeZodError } from "@/lib/validation";

/**
 * The thread filter lives in the URL (board permalinks, the threads API, exports): one parser
 * and one serializer for all of them. Multi-valued fields are comma-separated or repeated.
 */

/** The kinds a filter accepts are the engine's own list; the board and insights import it from here. */
export { TROUBLE_KINDS };

export const ARCHIVED_VIEWS = ["show", "only"] as const;
export type ArchivedView = (typeof ARCHIVED_VIEWS)[number];

const list = <T extends string>(item: z.ZodType<T, string>) =>
  z
    .array(z.string())
    .transform((values) => values.flatMap((v) => v.split(",")).map((v) => v.trim()).filter(Boolean))
    .pipe(z.array(item));

/**
 * A time in a URL: ISO-8601 or epoch milliseconds, within the times both stores hold (a digit
 * string of any length would overflow PostgreSQL's timestamps, where SQLite only finds nothing).
 */
export const instant = z
  .string()
  .transform((value, ctx) => {
    const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
    if (!Number.isFinite(ms)) {
      ctx.addIssue({ code: "custom", message: "expected an ISO-8601 time or epoch milliseconds" });
      return z.NEVER;
    }
    const outOfRange = storedTimeError(ms);
    if (outOfRange) {
      ctx.addIssue({ code: "custom", message: outOfRange });
      return z.NEVER;
    }
    return ms;
  });

const schema = z.object({
  status: list(z.enum(THREAD_STATUSES)).optional(),
  kind: list(z.enum(TROUBLE_KINDS)).optional(),
  provider: list(z.string().max(200)).optional(),
  model: list(z.string().max(200)).optional(),
  source: list(z.string().max(200)).optional(),
  q: z.array(z.string().max(200)).transform((v) => v[0]?.trim() || undefined).optional(),
  from: z.array(instant).transform((v) => v[0]).optional(),
  to: z.array(instant).transform((v) => v[0]).optional(),
  // Bounded so its offset stays a number both stores take (beyond it, a 400, not a database error).
  page: z.array(z.coerce.number().int().min(1).max(MAX_STORED_INT)).transform((v) => v[0]).optional(),
  pageSize: z.array(z.coerce.number().int().min(1).max(500)).transform((v) => v[0]).optional(),
  /** Archived and snoozed threads are hidden unless asked for: `show` lists them too, `only` lists just them. */
  archived: z.array(z.enum(ARCHIVED_VIEWS)).transform((v) => v[0]).optional(),
});

export type ThreadQuery = z.output<typeof schema>;
type Params = URLSearchParams | Record<string, string | string[] | undefined>;

function toArrays(params: Params): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (params instanceof URLSearchParams) {
    for (const [key, value] of params) (out[key] ??= []).push(value);
  } else {
    for (const [key, value] of Object.entries(params)) {
      if (value === undefined) continue;
      out[key] = Array.isArray(value) ? value : [value];
    }
  }
  return out;
}

export type ParsedThreadQuery = { ok: true; query: ThreadQuery } | { ok: false; error: string };

export function parseThreadQuery(params: Params): ParsedThreadQuery {
  const parsed = schema.safeParse(toArrays(params));
  if (parsed.success) return { ok: true, query: parsed.data };
  return { ok: false, error: describeZodError(parsed.error) };
}

/** The URL search string for a filter (page omitted when 1), stable in key order. */
export function threadQueryString(query: Partial<ThreadQuery>): string {
  const params = new URLSearchParams();
  for (const key of ["status", "kind", "provider", "model", "source"] as const) {
    const values = query[key];
    if (values?.length) params.set(key, values.join(","));
  }
  if (query.q) params.set("q", query.q);
  if (query.from !== undefined) params.set("from", new Date(query.from).toISOString());
  if (query.to !== undefined) params.set("to", new Date(query.to).toISOString());
  if (query.page && query.page > 1) params.set("page", String(query.page));
  if (query.pageSize) params.set("pageSize", String(query.pageSize));
  if (query.archived) params.set("archived", query.archived);
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** Whether a filter narrows the board (its page and page size aside): the board's empty state and its live rows say which. */
export function isFiltered(query: Partial<ThreadQuery>): boolean {
  return Object.entries(query).some(([key, v]) => key !== "page" && key !== "pageSize" && v !== undefined && (!Array.isArray(v) || v.length > 0));
}
