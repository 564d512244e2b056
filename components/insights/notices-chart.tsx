"use client";

import Link from "next/link";
import { Bar, BarChart, CartesianGrid, Legend, Tooltip, XAxis, YAxis } from "recharts";
import { formatInstant, Timestamp } from "@/components/time/timestamp";
import { useTimeZone } from "@/components/time/time-zone";
import { bucketTick, compactCount } from "@/lib/insights/axis";
import { SPLITS, type Split } from "@/lib/insights/range";
import type { InsightsData } from "@/lib/insights/types";
import { ChartCard, td, tdNum, th, thNum, thRow } from "./chart-card";
import { seriesColor, seriesLabel } from "./palette";

const SPLIT_LABELS: Record<Split, string> = { kind: "Kind", provider: "Provider", model: "Model" };

/** Retry notices per bucket, stacked by kind (or provider, or model). */
export function NoticesChart({ data, splitHref }: { data: InsightsData; splitHref: (split: Split) => string }) {
  const { mode } = useTimeZone();
  const { notices, range, split } = data;
  const span = Date.parse(range.to) - Date.parse(range.from);
  const rows = notices.buckets.map((b) => ({ at: Date.parse(b.at), ...Object.fromEntries(notices.series.map((s, i) => [`s${i}`, b.counts[s]])) }));
  const splitter = (
    <nav aria-label="Split notices by" className="flex items-center gap-1 text-xs">
      <span className="text-slate-600">Split by</span>
      {SPLITS.map((option) => (
        <Link
          key={option}
          href={splitHref(option)}
          scroll={false}
          aria-current={option === split ? "true" : undefined}
          data-testid={`split-${option}`}
          className={`rounded px-2 py-1 ring-1 ring-slate-300 focus-visible:outline-2 focus-visible:outline-sky-600 ${
            option === split ? "bg-slate-800 text-white" : "bg-white text-slate-700 hover:bg-slate-100"
          }`}
        >
          {SPLIT_LABELS[option]}
        </Link>
      ))}
    </nav>
  );
  return (
    <ChartCard
      id="notices"
      title="Retry notices"
      description={`Per ${range.bucket}, by ${SPLIT_LABELS[split].toLowerCase()}: ${data.totals.notices.toLocaleString("en")} in the range.`}
      empty={data.totals.notices === 0}
      emptyText="No retry notices in this range."
      actions={splitter}
      className="xl:col-span-2"
      chart={
        <BarChart responsive accessibilityLayer={false} data={rows} style={{ width: "100%", height: 260 }} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e2e8f0" />
          <XAxis dataKey="at" tickFormatter={(v: number) => bucketTick(v, range.bucket, span, mode)} minTickGap={28} tick={{ fontSize: 11 }} />
          <YAxis allowDecimals={false} width={44} tickFormatter={compactCount} tick={{ fontSize: 11 }} />
          <Tooltip labelFormatter={(v) => formatInstant(new Date(Number(v)).toISOString(), mode)} />
          <Legend itemSorter={null} wrapperStyle={{ fontSize: 12 }} />
          {notices.series.map((s, i) => (
            <Bar key={s} dataKey={`s${i}`} name={seriesLabel(split, s)} stackId="notices" fill={seriesColor(split, s, i)} isAnimationActive={false} />
          ))}
        </BarChart>
      }
      table={
        <table data-testid="chart-notices-table" className="w-full border-collapse">
          <caption className="sr-only">Retry notices per {range.bucket} by {split}</caption>
          <thead>
            <tr>
              <th scope="col" className={th}>
                {range.bucket === "day" ? "Day" : range.bucket === "hour" ? "Hour" : "Minute"} starting
              </th>
              {notices.series.map((s) => (
                <th key={s} scope="col" className={thNum} data-series={s}>
                  {seriesLabel(split, s)}
                </th>
              ))}
              <th scope="col" className={thNum}>
                Total
              </th>
            </tr>
          </thead>
          <tbody>
            {notices.buckets.map((b) => (
              <tr key={b.at} data-bucket={b.at}>
                <th scope="row" className={thRow}>
                  <Timestamp iso={b.at} />
                </th>
                {notices.series.map((s) => (
                  <td key={s} className={tdNum} data-series={s}>
                    {b.counts[s]}
                  </td>
                ))}
                <td className={tdNum} data-series="total">
                  {b.total}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      }
    />
  );
}
