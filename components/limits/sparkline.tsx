"use client";

import { Line, LineChart, YAxis } from "recharts";

/** A window's used share over its recent snapshots; decorative (the row states the current value). */
export function Sparkline({ points, label }: { points: { at: string; usedPercent: number | null }[]; label: string }) {
  if (points.length < 2) return <span className="text-xs text-slate-400">—</span>;
  const data = points.map((p) => ({ t: Date.parse(p.at), v: p.usedPercent }));
  return (
    <div role="img" aria-label={label} data-testid="limit-sparkline">
      <LineChart width={96} height={24} data={data} margin={{ top: 2, right: 2, bottom: 2, left: 2 }}>
        <YAxis hide domain={[0, 100]} />
        <Line type="monotone" dataKey="v" stroke="#0369a1" strokeWidth={1.5} dot={false} isAnimationActive={false} connectNulls />
      </LineChart>
    </div>
  );
}
