"use client";

import { Bar, BarChart, CartesianGrid, Tooltip, XAxis, YAxis } from "recharts";
import type { InsightsData } from "@/lib/insights/types";
import { humanDuration } from "@/lib/ui/format";
import { ChartCard, td, tdNum, th, thNum } from "./chart-card";

const SHOWN = 10;

/** Sum of backoff waits by provider and model, largest first. */
export function TimeLostChart({ data }: { data: InsightsData }) {
  const rows = data.timeLost.slice(0, SHOWN).map((row) => ({ ...row, label: `${row.provider} · ${row.model}` }));
  return (
    <ChartCard
      id="time-lost"
      title="Time lost waiting"
      description={
        <>
          Backoff from each retry notice until the retry, by provider and model:{" "}
          <strong data-testid="time-lost-total">{humanDuration(data.totals.timeLostMs)}</strong> in all.
        </>
      }
      empty={data.timeLost.length === 0}
      emptyText="No retry waited in this range."
      chart={
        <BarChart
          responsive
          accessibilityLayer={false}
          layout="vertical"
          data={rows}
          style={{ width: "100%", height: Math.max(120, 32 * rows.length + 40) }}
          margin={{ top: 4, right: 16, bottom: 0, left: 0 }}
        >
          <CartesianGrid strokeDasharray="3 3" horizontal={false} stroke="#e2e8f0" />
          <XAxis type="number" tickFormatter={(v: number) => humanDuration(v)} tick={{ fontSize: 11 }} />
          <YAxis type="category" dataKey="label" width={220} tick={{ fontSize: 11 }} />
          <Tooltip formatter={(v) => [humanDuration(Number(v)), "time lost"]} />
          <Bar dataKey="timeLostMs" name="time lost" fill="#d97706" isAnimationActive={false} />
        </BarChart>
      }
      table={
        <table data-testid="chart-time-lost-table" className="w-full border-collapse">
          <caption className="sr-only">Time lost waiting by provider and model</caption>
          <thead>
            <tr>
              <th scope="col" className={th}>Provider</th>
              <th scope="col" className={th}>Model</th>
              <th scope="col" className={thNum}>Retries</th>
              <th scope="col" className={thNum}>Time lost</th>
            </tr>
          </thead>
          <tbody>
            {data.timeLost.map((row) => (
              <tr key={`${row.provider}\0${row.model}`} data-provider={row.provider} data-model={row.model}>
                <td className={td}>{row.provider}</td>
                <td className={td}>{row.model}</td>
                <td className={tdNum}>{row.attempts}</td>
                <td className={tdNum} data-ms={row.timeLostMs}>
                  {humanDuration(row.timeLostMs)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      }
    />
  );
}
