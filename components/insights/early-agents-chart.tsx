"use client";

import { Bar, BarChart, CartesianGrid, Tooltip, XAxis, YAxis } from "recharts";
import { percent } from "@/lib/insights/axis";
import type { InsightsData } from "@/lib/insights/types";
import { humanDuration } from "@/lib/ui/format";
import { ChartCard, td, tdNum, th, thNum, thRow } from "./chart-card";
import { GAP_COLORS } from "./palette";

/** Per agent: the share of retries (with advice, that happened) that came earlier than advised. */
export function EarlyAgentsChart({ data }: { data: InsightsData }) {
  const rows = data.earlyByAgent;
  return (
    <ChartCard
      id="early-agents"
      title="Early retries by agent"
      description="Share of each agent's retries that came sooner than the provider advised."
      empty={rows.length === 0}
      emptyText="No advised retry happened in this range."
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
          <XAxis type="number" domain={[0, 1]} tickFormatter={(v: number) => percent(v)} tick={{ fontSize: 11 }} />
          <YAxis type="category" dataKey="agent" width={110} tick={{ fontSize: 11 }} />
          <Tooltip formatter={(v, _name, item) => [`${percent(Number(v))} (${item.payload.early} of ${item.payload.attempts})`, "early"]} />
          <Bar dataKey="share" name="early" fill={GAP_COLORS.early} isAnimationActive={false} />
        </BarChart>
      }
      table={
        <table data-testid="chart-early-agents-table" className="w-full border-collapse">
          <caption className="sr-only">Early retries by agent</caption>
          <thead>
            <tr>
              <th scope="col" className={th}>Agent</th>
              <th scope="col" className={thNum}>Judged retries</th>
              <th scope="col" className={thNum}>Early</th>
              <th scope="col" className={thNum}>Share</th>
              <th scope="col" className={thNum}>Early by, on average</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.agent} data-agent={row.agent}>
                <th scope="row" className={thRow}>{row.agent}</th>
                <td className={tdNum}>{row.attempts}</td>
                <td className={tdNum}>{row.early}</td>
                <td className={tdNum}>{percent(row.share)}</td>
                <td className={tdNum}>{row.avgEarlyByMs === null ? "—" : humanDuration(row.avgEarlyByMs)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      }
    />
  );
}
