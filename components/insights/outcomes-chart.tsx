"use client";

import { Bar, BarChart, CartesianGrid, Legend, Tooltip, XAxis, YAxis } from "recharts";
import { formatInstant, Timestamp } from "@/components/time/timestamp";
import { useTimeZone } from "@/components/time/time-zone";
import { bucketTick, compactCount, percent } from "@/lib/insights/axis";
import type { InsightsData } from "@/lib/insights/types";
import { ChartCard, td, tdNum, th, thNum, thRow } from "./chart-card";
import { seriesColor } from "./palette";

/** Episodes by outcome per bucket of their end, with the recovery ratio. */
export function OutcomesChart({ data }: { data: InsightsData }) {
  const { mode } = useTimeZone();
  const { outcomes, range, totals } = data;
  const span = Date.parse(range.to) - Date.parse(range.from);
  const rows = outcomes.buckets.map((b) => ({ at: Date.parse(b.at), ...Object.fromEntries(outcomes.series.map((s, i) => [`s${i}`, b.counts[s]])) }));
  return (
    <ChartCard
      id="outcomes"
      title="Episode outcomes"
      description={
        <>
          Recovery ratio <strong data-testid="recovery-ratio">{percent(totals.recoveryRatio)}</strong>: recovered or completed ÷ (those +
          exhausted + failed); stopped, interrupted and superseded are not counted.
        </>
      }
      empty={totals.episodesEnded === 0}
      emptyText="No retry episode ended in this range."
      chart={
        <BarChart responsive accessibilityLayer={false} data={rows} style={{ width: "100%", height: 240 }} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e2e8f0" />
          <XAxis dataKey="at" tickFormatter={(v: number) => bucketTick(v, range.bucket, span, mode)} minTickGap={28} tick={{ fontSize: 11 }} />
          <YAxis allowDecimals={false} width={44} tickFormatter={compactCount} tick={{ fontSize: 11 }} />
          <Tooltip labelFormatter={(v) => formatInstant(new Date(Number(v)).toISOString(), mode)} />
          <Legend itemSorter={null} wrapperStyle={{ fontSize: 12 }} />
          {outcomes.series.map((s, i) => (
            <Bar key={s} dataKey={`s${i}`} name={s} stackId="outcomes" fill={seriesColor("outcome", s, i)} isAnimationActive={false} />
          ))}
        </BarChart>
      }
      table={
        <table data-testid="chart-outcomes-table" className="w-full border-collapse">
          <caption className="sr-only">Episodes ended per {range.bucket} by outcome, with the recovery ratio</caption>
          <thead>
            <tr>
              <th scope="col" className={th}>
                Ended in the {range.bucket} starting
              </th>
              {outcomes.series.map((s) => (
                <th key={s} scope="col" className={thNum} data-series={s}>
                  {s}
                </th>
              ))}
              <th scope="col" className={thNum}>
                Recovery ratio
              </th>
            </tr>
          </thead>
          <tbody>
            {outcomes.buckets
              .filter((b) => b.total > 0)
              .map((b) => (
                <tr key={b.at} data-bucket={b.at}>
                  <th scope="row" className={thRow}>
                    <Timestamp iso={b.at} />
                  </th>
                  {outcomes.series.map((s) => (
                    <td key={s} className={tdNum} data-series={s}>
                      {b.counts[s]}
                    </td>
                  ))}
                  <td className={tdNum} data-series="recoveryRatio">
                    {percent(b.recoveryRatio)}
                  </td>
                </tr>
              ))}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row" className={`${th} bg-white`}>
                Whole range ({totals.episodesOpen} still open at its end)
              </th>
              {outcomes.series.map((s) => (
                <td key={s} className={`${tdNum} font-semibold`} data-series={s}>
                  {outcomes.buckets.reduce((sum, b) => sum + b.counts[s], 0)}
                </td>
              ))}
              <td className={`${tdNum} font-semibold`} data-series="recoveryRatio">
                {percent(totals.recoveryRatio)}
              </td>
            </tr>
          </tfoot>
        </table>
      }
    />
  );
}
