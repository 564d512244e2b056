"use client";

import Link from "next/link";
import { useState } from "react";
import { useTimeZone } from "@/components/time/time-zone";
import { fromZoneInput, toZoneInput } from "@/lib/insights/axis";
import { RANGE_PRESETS, timeRange, type FactFilter, type InsightsQuery, type RangePreset } from "@/lib/insights/range";
import type { FilterOptions } from "@/lib/wire/types";
import { FilterForm, type FilterValues } from "@/components/filters/filter-form";
import { Field, styles } from "@/components/ui/controls";

const PRESET_LABELS: Record<RangePreset, string> = { "1h": "Last hour", "24h": "24 h", "7d": "7 days" };
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
  const zoneName = mode === "utc" ? "UTC" : "local";
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

  const applyFilter = (values: FilterValues) => {
    const list = (name: keyof FilterValues) => values[name]?.split(",");
    const filter = {
      status: list("status"),
      kind: list("kind"),
      provider: list("provider"),
      model: list("model"),
      source: list("source"),
      q: values.q,
    } as FactFilter;
    navigate(hrefFor({ filter }));
  };
  const { q, ...lists } = query.filter;
  const current: FilterValues = { ...Object.fromEntries(Object.entries(lists).map(([name, values]) => [name, (values as string[] | undefined)?.join(",") ?? ""])), q: q ?? "" };

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
            <Field label={`From (${zoneName})`}>
              <input type="datetime-local" name="from" defaultValue={toZoneInput(query.range.from, mode)} data-testid="custom-from" className={styles.control} />
            </Field>
            <Field label={`To (${zoneName})`}>
              <input type="datetime-local" name="to" defaultValue={toZoneInput(query.range.to, mode)} data-testid="custom-to" className={styles.control} />
            </Field>
            <button type="submit" data-testid="custom-apply" className={styles.primaryButton}>
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
      <FilterForm
        label="Filter insights"
        current={current}
        options={options}
        onApply={applyFilter}
        statusLabel="Thread status"
        statusLast
        searchLabel="Search threads"
        className="flex flex-wrap items-end gap-3"
      />
    </div>
  );
}
