"use client";

import { Bar, BarChart, CartesianGrid, Legend, Tooltip, XAxis, YAxis } from "recharts";
import { compactCount, percent } from "@/lib/insights/axis";
import type { InsightsData } from "@/lib/insights/types";
import { ChartCard, td, tdNum, th, thNum, thRow } from "./chart-card";
import { GAP_COLORS } from "./palette";

/**
 * Advised delay vs actual gap as two histograms over the same bins: the actual bars split into
 * retries on time and retries earlier than advised (red), which is what breaks provider limits.
 */
export function GapChart({ data }: { data: InsightsData }) {
  const { bins } = data.gaps;
  const rows = bins.map((b) => ({ label: b.label.replace("≤ ", ""), advised: b.advised, onTime: b.actual - b.early, early: b.early }));
  const empty = bins.every((b) => b.actual === 0 && b.advised === 0);
  return (
    <ChartCard
      id="gaps"
      title="Advised vs actual retry gap"
      description={
        <>
          How long providers asked to wait, and how long sources really waited.{" "}
          <strong data-testid="early-share">{percent(data.totals.earlyShare)}</strong> of {data.totals.attemptsJudged.toLocaleString("en")} judged retries came early.
        </>
      }
      empty={empty}
      emptyText="No retry happened in this range."
      chart={
        <BarChart responsive accessibilityLayer={false} data={rows} style={{ width: "100%", height: 260 }} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e2e8f0" />
          <XAxis dataKey="label" interval={0} angle={-35} textAnchor="end" height={52} tick={{ fontSize: 11 }} />
          <YAxis allowDecimals={false} width={44} tickFormatter={compactCount} tick={{ fontSize: 11 }} />
          <Tooltip labelFormatter={(label) => `gap ${String(label).startsWith(">") ? label : `≤ ${label}`}`} />
          <Legend itemSorter={null} wrapperStyle={{ fontSize: 12 }} />
          <Bar dataKey="advised" name="advised delay" fill={GAP_COLORS.advised} isAnimationActive={false} />
          <Bar dataKey="onTime" name="actual gap, on time" stackId="actual" fill={GAP_COLORS.onTime} isAnimationActive={false} />
          <Bar dataKey="early" name="actual gap, early" stackId="actual" fill={GAP_COLORS.early} isAnimationActive={false} />
        </BarChart>
      }
      table={
        <table data-testid="chart-gaps-table" className="w-full border-collapse">
          <caption className="sr-only">Advised delays and actual retry gaps per bin; early retries came sooner than advised</caption>
          <thead>
            <tr>
              <th scope="col" className={th}>Gap</th>
              <th scope="col" className={thNum}>Advised</th>
              <th scope="col" className={thNum}>Actual</th>
              <th scope="col" className={thNum}>Of which early</th>
            </tr>
          </thead>
          <tbody>
            {bins.map((b) => (
              <tr key={b.label} data-up-to-ms={b.upToMs ?? "inf"}>
                <th scope="row" className={thRow}>{b.label}</th>
                <td className={tdNum} data-series="advised">{b.advised}</td>
                <td className={tdNum} data-series="actual">{b.actual}</td>
                <td className={`${tdNum} ${b.early ? "font-semibold text-red-700" : ""}`} data-series="early">{b.early}</td>
              </tr>
            ))}
          </tbody>
        </table>
      }
    />
  );
}
