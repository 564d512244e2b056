import type { BucketUnit } from "./buckets";

/**
 * Chart axis labels in the zone the operator chose (UTC or the browser's), short enough to fit
 * under a bar: minutes and hours as "14:05", with the date when the range spans days.
 */
export type ZoneMode = "utc" | "local";

const cache = new Map<string, Intl.DateTimeFormat>();
function format(mode: ZoneMode, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${mode}:${JSON.stringify(options)}`;
  let f = cache.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat("en-GB", { timeZone: mode === "utc" ? "UTC" : undefined, hour12: false, ...options });
    cache.set(key, f);
  }
  return f;
}

export function bucketTick(ms: number, unit: BucketUnit, spanMs: number, mode: ZoneMode): string {
  const date = new Date(ms);
  if (unit === "day") return format(mode, { day: "2-digit", month: "short" }).format(date);
  if (spanMs > 86_400_000) return format(mode, { day: "2-digit", month: "short", hour: "2-digit", minute: "2-digit" }).format(date);
  return format(mode, { hour: "2-digit", minute: "2-digit" }).format(date);
}

const compact = new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 });

/** "950", "1.8K", "200K": counts that fit a narrow axis. */
export function compactCount(n: number): string {
  return compact.format(n);
}

/** "0 %", "33 %", "100 %" */
export function percent(share: number | null): string {
  return share === null ? "—" : `${Math.round(share * 100)} %`;
}

/** An instant as a `<input type="datetime-local">` value ("2026-11-29T14:05") in the chosen zone. */
export function toZoneInput(ms: number, mode: ZoneMode): string {
  const date = new Date(mode === "utc" ? ms : ms - new Date(ms).getTimezoneOffset() * 60_000);
  return date.toISOString().slice(0, 16);
}

/** The instant a `datetime-local` value names in the chosen zone; null when it is not a time. */
export function fromZoneInput(value: string, mode: ZoneMode): number | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return null;
  const ms = mode === "utc" ? Date.parse(`${value}Z`) : new Date(value).getTime();
  return Number.isFinite(ms) ? ms : null;
}
