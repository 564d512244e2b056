import { z } from "zod";
import type { AuditFilter } from "@/lib/db/audit";
import { RANGE_PRESETS, rangePreset } from "@/lib/insights/range";
import { instant } from "@/lib/threads/filter";

/**
 * The audit filter in a URL, shared by the audit page and its export: exact action and actor, a
 * search in target, reason and detail, and a time range — `range=1h|24h|7d` back from now, or
 * `from`/`to` (ISO-8601 or epoch ms). Empty values count as absent.
 */
const blank = (value: unknown) => (value === "" ? undefined : value);

export const auditQuery = z.object({
  action: z.preprocess(blank, z.string().max(100).optional()),
  actor: z.preprocess(blank, z.string().max(200).optional()),
  q: z.preprocess(blank, z.string().max(200).optional()),
  range: z.preprocess(blank, rangePreset.optional()),
  from: z.preprocess(blank, instant.optional()),
  to: z.preprocess(blank, instant.optional()),
});

export type AuditQuery = z.output<typeof auditQuery>;

/** The store's filter: a preset range becomes its instants now; `from`/`to` win over it. */
export function auditFilter({ range, from, to, ...rest }: AuditQuery, now: number): AuditFilter {
  if (from === undefined && to === undefined && range) return { ...rest, from: now - RANGE_PRESETS[range], to: now };
  return { ...rest, from, to };
}

/** The URL search string of a filter as given (the page's links: export, other pages). */
export function auditQueryString(query: AuditQuery, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    params.set(key, key === "from" || key === "to" ? new Date(value as number).toISOString() : String(value));
  }
  for (const [key, value] of Object.entries(extra)) params.set(key, value);
  const text = params.toString();
  return text ? `?${text}` : "";
}
