import { z } from "zod";
import { parseThreadQuery, threadQueryString, type ThreadQuery } from "@/lib/threads/filter";
import { BUCKET_MS, chooseBucket, type BucketUnit } from "./buckets";

/**
 * The insights and export query: the board's filter (parsed by lib/threads/filter, the one URL
 * filter parser) plus a time range and, for the notices chart, a split.
 * - `range=1h|24h|7d` is relative to now; `from`/`to` (ISO or epoch ms) make an absolute range,
 *   which is what an incident permalink uses: a past range renders the same numbers every time.
 * - `split=kind|provider|model` picks the series of the notices chart.
 * For insights, `from`/`to` bound the facts (notices, attempts, episode ends), not the
 * threads' updatedAt as on the board.
 */
export const RANGE_PRESETS = { "1h": 3_600_000, "24h": 86_400_000, "7d": 7 * 86_400_000 } as const;
export type RangePreset = keyof typeof RANGE_PRESETS;
const DEFAULT_PRESET: RangePreset = "24h";
export const SPLITS = ["kind", "provider", "model"] as const;
export type Split = (typeof SPLITS)[number];
/** A year of day buckets is the widest chart that still reads. */
const MAX_SPAN_MS = 366 * 86_400_000;

export interface TimeRange {
  preset: RangePreset | "custom";
  /** Epoch ms, [from, to). */
  from: number;
  to: number;
  bucket: BucketUnit;
  bucketMs: number;
}

/** The board filter without its time and paging (a ThreadFilter). */
export type FactFilter = Omit<ThreadQuery, "from" | "to" | "page" | "pageSize">;

export interface InsightsQuery {
  filter: FactFilter;
  range: TimeRange;
  split: Split;
}

export interface ExportQuery {
  filter: FactFilter;
  /** Null: everything, whatever its time. */
  range: { from: number; to: number } | null;
}

type Params = URLSearchParams | Record<string, string | string[] | undefined>;
type Parsed<T> = { ok: true; query: T } | { ok: false; error: string };

/** `range=` in a URL: one of the presets. */
export const rangePreset = z.enum(Object.keys(RANGE_PRESETS) as [RangePreset, ...RangePreset[]], { error: "expected 1h, 24h or 7d" });

const extras = z.object({
  range: rangePreset.optional(),
  split: z.enum(SPLITS, { error: "expected kind, provider or model" }).optional(),
});

function first(params: Params, key: string): string | undefined {
  if (params instanceof URLSearchParams) return params.get(key) ?? undefined;
  const value = params[key];
  return Array.isArray(value) ? value[0] : value;
}

function parseCommon(params: Params, now: number, defaultPreset: RangePreset | null): Parsed<{ filter: FactFilter; range: TimeRange | null; split: Split }> {
  const base = parseThreadQuery(params);
  if (!base.ok) return base;
  const parsed = extras.safeParse({ range: first(params, "range") || undefined, split: first(params, "split") || undefined });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, error: `${issue.path.join(".")}: ${issue.message}` };
  }
  const { status, kind, provider, model, source, q, from, to } = base.query;
  const filter: FactFilter = { status, kind, provider, model, source, q };
  let range: TimeRange | null = null;
  if (from !== undefined || to !== undefined) {
    const end = to ?? now;
    range = timeRange("custom", from ?? end - RANGE_PRESETS[DEFAULT_PRESET], end);
  } else {
    const preset = parsed.data.range ?? defaultPreset;
    if (preset) range = timeRange(preset, now - RANGE_PRESETS[preset], now);
  }
  if (range && range.from >= range.to) return { ok: false, error: "from: must be before to" };
  if (range && range.to - range.from > MAX_SPAN_MS) return { ok: false, error: "from: the range may span at most 366 days" };
  return { ok: true, query: { filter, range, split: parsed.data.split ?? "kind" } };
}

export function timeRange(preset: TimeRange["preset"], from: number, to: number): TimeRange {
  const bucket = chooseBucket(to - from);
  return { preset, from, to, bucket, bucketMs: BUCKET_MS[bucket] };
}

/** Insights always have a range: the last 24 h unless the URL says otherwise. */
export function parseInsightsQuery(params: Params, now: number): Parsed<InsightsQuery> {
  const parsed = parseCommon(params, now, DEFAULT_PRESET);
  if (!parsed.ok) return parsed;
  return { ok: true, query: { ...parsed.query, range: parsed.query.range! } };
}

/** Exports take the same parameters; without a range they export everything. */
export function parseExportQuery(params: Params, now: number): Parsed<ExportQuery> {
  const parsed = parseCommon(params, now, null);
  if (!parsed.ok) return parsed;
  const { range } = parsed.query;
  return { ok: true, query: { filter: parsed.query.filter, range: range && { from: range.from, to: range.to } } };
}

/**
 * The URL search string of an insights view. `absolute` pins a relative range to its instants:
 * the permalink an incident report links to.
 */
export function insightsQueryString(query: InsightsQuery, options: { absolute?: boolean } = {}): string {
  const { range } = query;
  const absolute = options.absolute || range.preset === "custom";
  const params = new URLSearchParams(
    threadQueryString({ ...query.filter, ...(absolute ? { from: range.from, to: range.to } : {}) }).replace(/^\?/, ""),
  );
  if (!absolute && range.preset !== DEFAULT_PRESET) params.set("range", range.preset);
  if (query.split !== "kind") params.set("split", query.split);
  const text = params.toString();
  return text ? `?${text}` : "";
}
