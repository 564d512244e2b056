"use client";

import Link from "next/link";
import { useState } from "react";
import type { FilterOptions } from "@/components/board/board-filters";
import { useTimeZone } from "@/components/time/time-zone";
import { fromZoneInput, toZoneInput } from "@/lib/insights/axis";
import { RANGE_PRESETS, timeRange, type FactFilter, type InsightsQuery, type RangePreset } from "@/lib/insights/range";
import { THREAD_STATUSES } from "@/lib/retry/types";
import { TROUBLE_KINDS } from "@/lib/threads/filter";
import { kindLabel, statusLabel } from "@/lib/ui/format";
import { FilterSelect, type FilterOption } from "@/components/filters/filter-select";

const PRESET_LABELS: Record<RangePreset, string> = { "1h": "Last hour", "24h": "24 h", "7d": "7 days" };
const control =
  "rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm text-slate-900 focus-visible:outline-2 focus-visible:outline-sky-600";
const pill = (active: boolean) =>
  `rounded px-3 py-1.5 text-sm ring-1 ring-slate-300 focus-visible:outline-2 focus-visible:outline-sky-600 ${
    active ? "bg-slate-800 text-white" : "bg-white text-slate-700 hover:bg-slate-100"
  }`;

/**
 * The time range (presets are links: the URL is the state) and the board's filters. A custom
 * range is typed in the zone the operator chose; the URL always carries UTC instants.
 */
export function InsightsControls({
  query,
  options,
  hrefFor,
  navigate,
}: {
  query: InsightsQuery;
  options: FilterOptions;
  hrefFor: (change: Partial<InsightsQuery>) => string;
  navigate: (href: string) => void;
}) {
  const { mode } = useTimeZone();
  const [customOpen, setCustomOpen] = useState(query.range.preset === "custom");
  const [customError, setCustomError] = useState<string | null>(null);

  const applyCustom = (form: HTMLFormElement) => {
    const data = new FormData(form);
    const from = fromZoneInput(String(data.get("from") ?? ""), mode);
    const to = fromZoneInput(String(data.get("to") ?? ""), mode);
    if (from === null || to === null) return setCustomError("Enter both times.");
    if (from >= to) return setCustomError("The start must be before the end.");
    setCustomError(null);
    navigate(hrefFor({ range: timeRange("custom", from, to) }));
  };

  const applyFilter = (form: HTMLFormElement) => {
    const data = new FormData(form);
    const list = (name: string) => {
      const value = String(data.get(name) ?? "").trim();
      return value ? value.split(",") : undefined;
    };
    const filter = {
      status: list("status"),
      kind: list("kind"),
      provider: list("provider"),
      model: list("model"),
      source: list("source"),
      q: String(data.get("q") ?? "").trim() || undefined,
    } as FactFilter;
    navigate(hrefFor({ filter }));
  };

  const select = (name: keyof FactFilter, label: string, options: FilterOption[]) => (
    <FilterSelect name={name} label={label} current={(query.filter[name] as string[] | undefined)?.join(",") ?? ""} options={options} onApply={applyFilter} />
  );

  return (
    <div className="space-y-3 rounded-lg border border-slate-200 bg-white p-3">
      <div className="flex flex-wrap items-center gap-2">
        <span id="range-label" className="text-xs font-medium text-slate-600">
          Time range
        </span>
        <nav aria-labelledby="range-label" className="flex flex-wrap gap-1">
          {(Object.keys(RANGE_PRESETS) as RangePreset[]).map((preset) => (
            <Link
              key={preset}
              href={hrefFor({ range: { ...query.range, preset } })}
              scroll={false}
              aria-current={query.range.preset === preset ? "true" : undefined}
              data-testid={`range-${preset}`}
              className={pill(query.range.preset === preset)}
            >
              {PRESET_LABELS[preset]}
            </Link>
          ))}
          <button
            type="button"
            aria-expanded={customOpen}
            aria-controls="custom-range"
            data-testid="range-custom"
            onClick={() => setCustomOpen((open) => !open)}
            className={pill(query.range.preset === "custom")}
          >
            Custom…
          </button>
        </nav>
        {customOpen && (
          <form
            id="custom-range"
            key={`${query.range.from}-${query.range.to}-${mode}`}
            aria-label="Custom time range"
            onSubmit={(event) => {
              event.preventDefault();
              applyCustom(event.currentTarget);
            }}
            className="flex flex-wrap items-end gap-2"
          >
            <label className="flex flex-col gap-1 text-xs font-medium text-slate-600">
              From ({mode === "utc" ? "UTC" : "local"})
              <input type="datetime-local" name="from" defaultValue={toZoneInput(query.range.from, mode)} data-testid="custom-from" className={control} />
            </label>
            <label className="flex flex-col gap-1 text-xs font-medium text-slate-600">
              To ({mode === "utc" ? "UTC" : "local"})
              <input type="datetime-local" name="to" defaultValue={toZoneInput(query.range.to, mode)} data-testid="custom-to" className={control} />
            </label>
            <button type="submit" data-testid="custom-apply" className="rounded-md bg-slate-800 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-900 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-sky-600">
              Show range
            </button>
            {customError && (
              <p role="alert" className="text-sm text-red-800">
                {customError}
              </p>
            )}
          </form>
        )}
      </div>
      <form
        key={JSON.stringify(query.filter)}
        role="search"
        aria-label="Filter insights"
        onSubmit={(event) => {
          event.preventDefault();
          applyFilter(event.currentTarget);
        }}
        className="flex flex-wrap items-end gap-3"
      >
        {select("kind", "Kind", TROUBLE_KINDS.map((k) => ({ value: k, label: kindLabel(k) })))}
        {select("provider", "Provider", options.providers.map((p) => ({ value: p, label: p })))}
        {select("model", "Model", options.models.map((m) => ({ value: m, label: m })))}
        {select("source", "Source", options.sources.map((s) => ({ value: s.id, label: s.name })))}
        {select("status", "Thread status", THREAD_STATUSES.map((s) => ({ value: s, label: statusLabel(s) })))}
        <label className="flex min-w-[14rem] flex-1 flex-col gap-1 text-xs font-medium text-slate-600">
          Search threads
          <input type="search" name="q" defaultValue={query.filter.q ?? ""} placeholder="thread id, title, error text…" data-testid="filter-q" className={control} />
        </label>
        <button type="submit" className="rounded-md bg-slate-800 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-900 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-sky-600">
          Apply
        </button>
      </form>
    </div>
  );
}
