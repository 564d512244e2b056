"use client";

import { Bar, BarChart, CartesianGrid, Legend, Tooltip, XAxis, YAxis } from "recharts";
import { formatInstant } from "@/components/time/timestamp";
import { useTimeZone } from "@/components/time/time-zone";
import { seriesColor } from "@/components/insights/palette";
import type { IncidentDetail } from "@/lib/wire/types";

/** Notices per minute, stacked by thread (loaded lazily: recharts is heavy). */
export function IncidentTimelineChart({ detail }: { detail: IncidentDetail }) {
  const { mode } = useTimeZone();
  const names = new Map(detail.threads.map((t) => [t.key, t.title || t.id]));
  const keys = [...new Set(detail.timeline.map((r) => r.thread))];
  const byMinute = new Map<string, Record<string, number>>();
  for (const r of detail.timeline) byMinute.set(r.minute, { ...byMinute.get(r.minute), [`t${r.thread}`]: r.notices });
  const rows = [...byMinute].map(([minute, counts]) => ({ at: Date.parse(minute), ...counts }));
  return (
    <BarChart responsive accessibilityLayer={false} data={rows} style={{ width: "100%", height: 260 }} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
      <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e2e8f0" />
      <XAxis dataKey="at" tickFormatter={(v: number) => formatInstant(new Date(v).toISOString(), mode, false)} minTickGap={28} tick={{ fontSize: 11 }} />
      <YAxis allowDecimals={false} width={36} tick={{ fontSize: 11 }} />
      <Tooltip labelFormatter={(v) => formatInstant(new Date(Number(v)).toISOString(), mode)} />
      <Legend wrapperStyle={{ fontSize: 12 }} />
      {keys.map((key, i) => (
        <Bar key={key} dataKey={`t${key}`} name={names.get(key) ?? String(key)} stackId="notices" fill={seriesColor("model", String(key), i)} isAnimationActive={false} />
      ))}
    </BarChart>
  );
}
