"use client";

import { useId, useState, type ReactNode } from "react";

/**
 * One insight: a heading, a visual chart and its table. The table is the accessible and
 * scrapable version of the chart: always in the page (visually hidden while the chart shows,
 * so screen readers read it), shown instead of the chart with the Table button. The chart
 * itself is decorative for assistive technology (aria-hidden, not focusable).
 */
export function ChartCard({
  id,
  title,
  description,
  empty,
  emptyText,
  actions,
  chart,
  table,
  className = "",
}: {
  id: string;
  title: string;
  description: ReactNode;
  empty: boolean;
  emptyText: string;
  actions?: ReactNode;
  chart: ReactNode;
  table: ReactNode;
  className?: string;
}) {
  const [view, setView] = useState<"chart" | "table">("chart");
  const headingId = useId();
  return (
    <section
      aria-labelledby={headingId}
      data-testid={`chart-${id}`}
      data-empty={empty}
      className={`flex min-w-0 flex-col gap-3 rounded-lg border border-slate-200 bg-white p-4 ${className}`}
    >
      <div className="flex flex-wrap items-start gap-x-4 gap-y-2">
        <div className="min-w-0 flex-1">
          <h2 id={headingId} className="text-base font-semibold text-slate-900">
            {title}
          </h2>
          <p className="text-sm text-slate-600">{description}</p>
        </div>
        <div className="flex flex-wrap items-center gap-2">
          {actions}
          <div role="group" aria-label={`${title}: show as`} className="flex rounded-md text-xs ring-1 ring-slate-300">
            {(["chart", "table"] as const).map((option) => (
              <button
                key={option}
                type="button"
                aria-pressed={view === option}
                data-testid={`chart-${id}-show-${option}`}
                onClick={() => setView(option)}
                className={`px-2.5 py-1 first:rounded-l-md last:rounded-r-md focus-visible:outline-2 focus-visible:outline-sky-600 ${
                  view === option ? "bg-slate-800 text-white" : "bg-white text-slate-700 hover:bg-slate-100"
                }`}
              >
                {option === "chart" ? "Chart" : "Table"}
              </button>
            ))}
          </div>
        </div>
      </div>
      {view === "chart" &&
        (empty ? (
          <p data-testid={`chart-${id}-empty`} className="flex h-48 items-center justify-center rounded-md bg-slate-50 text-sm text-slate-600">
            {emptyText}
          </p>
        ) : (
          <div aria-hidden="true" className="min-w-0">
            {chart}
          </div>
        ))}
      <div className={view === "table" ? "max-h-96 overflow-auto" : "sr-only"}>{table}</div>
    </section>
  );
}

/** Table cells, shared so every fallback table reads alike. */
export const th = "whitespace-nowrap border-b border-slate-200 bg-slate-50 px-3 py-1.5 text-left text-xs font-semibold text-slate-700";
export const thNum = `${th} text-right`;
export const td = "whitespace-nowrap border-b border-slate-100 px-3 py-1.5 text-left text-sm text-slate-800";
export const tdNum = `${td} text-right tabular-nums`;
/** A row's header cell (`<th scope="row">`), read like a data cell. */
export const thRow = `${td} font-normal`;
