"use client";

import { useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import Link from "next/link";
import { LiveIndicator } from "@/components/live/live-indicator";
import { usePollInterval } from "@/components/live/live-updates";
import { threadHref } from "@/components/threads/links";
import { StatusBadge } from "@/components/threads/status-badge";
import { Countdown, ResetTime } from "@/components/time/countdown";
import { useServerNow } from "@/components/time/server-clock";
import { Timestamp } from "@/components/time/timestamp";
import { styles } from "@/components/ui/controls";
import { limitsQuery } from "@/lib/client/queries";
import { isLimitStatus, type LimitStatus } from "@/lib/ingest/limit-snapshots";
import { humanDuration, relativeTime } from "@/lib/ui/format";
import type { LimitsView as LimitsData, LimitWindowView } from "@/lib/wire/types";

/** recharts is loaded only once a page with a sparkline renders. */
const Sparkline = dynamic(() => import("./sparkline").then((m) => m.Sparkline), { ssr: false, loading: () => <span className="inline-block h-6 w-24" /> });

const STATUS_STYLE: Record<LimitStatus, { label: string; bar: string; badge: string }> = {
  ok: { label: "ok", bar: "bg-emerald-600", badge: "bg-emerald-50 text-emerald-900 ring-emerald-600/30" },
  warning: { label: "warning", bar: "bg-amber-500", badge: "bg-amber-50 text-amber-900 ring-amber-600/30" },
  rejected: { label: "rejected", bar: "bg-red-700", badge: "bg-red-50 text-red-900 ring-red-600/30" },
};

/** Live like the board: refetched when the stream says a window or a thread's status changed. */
export function LimitsView({ initial }: { initial: LimitsData }) {
  const pollInterval = usePollInterval();
  const query = useQuery({ ...limitsQuery(), initialData: initial, refetchInterval: pollInterval });
  const { data } = query;
  return (
    <div className="space-y-4" data-testid="limits">
      <div>
        <div className="flex flex-wrap items-center gap-x-4 gap-y-2">
          <h1 className="text-2xl font-semibold tracking-tight">Limits</h1>
          <LiveIndicator lastUpdated={query.dataUpdatedAt || null} />
        </div>
        <p className="text-sm text-slate-600">
          How full each usage window is and when it resets, as the agents and their providers last reported it. The same rows as JSON:{" "}
          <a href="/api/v1/limits" className="underline">/api/v1/limits</a>.
        </p>
      </div>
      {data.windows.length === 0 ? (
        <p className="rounded-lg border border-dashed border-slate-300 bg-white p-6 text-slate-700" data-testid="limits-empty">
          No usage window reported yet. Codex app-server, Claude Code (signed in with OAuth) and provider headers passed on by a proxy report them; so
          does a canonical <code>limit.updated</code> event.
        </p>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
          <table className="w-full min-w-[1100px] text-left text-sm" data-testid="limits-table">
            <caption className="sr-only">Usage windows, one row per source, account, provider and window</caption>
            <thead className={styles.thead}>
              <tr>
                <th scope="col" className="px-3 py-2">Window</th>
                <th scope="col" className="px-3 py-2">Source · account</th>
                <th scope="col" className="px-3 py-2">Used</th>
                <th scope="col" className="px-3 py-2">Status</th>
                <th scope="col" className="px-3 py-2">Reset</th>
                <th scope="col" className="px-3 py-2">As of</th>
                <th scope="col" className="px-3 py-2">Blocked threads</th>
                <th scope="col" className="px-3 py-2">History</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {data.windows.map((window) => (
                <LimitRow key={window.key} window={window} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function windowLabel(window: LimitWindowView): string {
  const minutes = window.windowMinutes;
  if (!minutes) return window.window;
  return `${window.window} (${minutes % 1440 === 0 ? `${minutes / 1440} d` : humanDuration(minutes * 60_000)})`;
}

function LimitRow({ window }: { window: LimitWindowView }) {
  const style = isLimitStatus(window.status) ? STATUS_STYLE[window.status] : STATUS_STYLE.ok;
  return (
    <tr
      id={`limit-${window.key}`}
      data-testid="limit-row"
      data-window={window.window}
      data-provider={window.provider}
      data-status={window.status}
      data-stale={window.stale}
      data-account={window.account ?? ""}
      className={`align-top target:bg-sky-50 ${window.stale ? "text-slate-500" : ""}`}
    >
      <th scope="row" className="px-3 py-2 font-medium">
        <div className="whitespace-nowrap">{windowLabel(window)}</div>
        <div className="text-xs font-normal text-slate-500">{window.provider}</div>
      </th>
      <td className="px-3 py-2">
        <div>{window.source}</div>
        {window.account && <div className="text-xs text-slate-500">{window.account}</div>}
      </td>
      <td className="px-3 py-2">
        <UsageBar percent={window.usedPercent} barClass={style.bar} stale={window.stale} />
      </td>
      <td className="px-3 py-2">
        <span className={`inline-flex rounded-full px-2 py-0.5 text-xs font-medium ring-1 ${style.badge}`} data-testid="limit-status">
          {style.label}
        </span>
        {window.reachedType && <div className="mt-1 text-xs text-slate-500">{window.reachedType.replaceAll("_", " ")}</div>}
      </td>
      <td className="px-3 py-2">
        {window.resetAt ? (
          <>
            <ResetTime at={window.resetAt} />
            <div className="text-xs">
              <Countdown to={window.resetAt} testId="limit-countdown" />
            </div>
          </>
        ) : (
          <span className="text-slate-400">—</span>
        )}
      </td>
      <td className="px-3 py-2">
        <AsOf iso={window.observedAt} stale={window.stale} />
      </td>
      <td className="px-3 py-2" data-testid="limit-blocked">
        {window.blockedThreads.length === 0 ? (
          <span className="text-slate-400">none</span>
        ) : (
          <ul className="space-y-1">
            {window.blockedThreads.map((thread) => (
              <li key={thread.key} className="flex items-center gap-2">
                <StatusBadge status={thread.status} />
                <Link href={threadHref({ id: thread.id, sourceId: window.sourceId })} className="break-all text-sky-800 underline-offset-2 hover:underline">
                  {thread.title || thread.id}
                </Link>
              </li>
            ))}
          </ul>
        )}
      </td>
      <td className="px-3 py-2">
        <Sparkline points={window.history} label={`${windowLabel(window)} used share over the last ${window.history.length} snapshots`} />
      </td>
    </tr>
  );
}

/** The fill as a bar and as text: the text is what assistive technology reads. */
function UsageBar({ percent, barClass, stale }: { percent: number | null; barClass: string; stale: boolean }) {
  if (percent === null) return <span className="text-slate-400">unknown</span>;
  const text = `${Number.isInteger(percent) ? percent : percent.toFixed(1)} %`;
  return (
    <div className="flex items-center gap-2">
      <div
        role="meter"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent}
        aria-valuetext={`${text} used`}
        className="h-2.5 w-32 shrink-0 overflow-hidden rounded-full bg-slate-200"
      >
        <div className={`h-full ${stale ? "bg-slate-400" : barClass}`} style={{ width: `${Math.min(100, percent)}%` }} />
      </div>
      <span className="whitespace-nowrap font-mono tabular-nums" data-testid="limit-percent">{text}</span>
    </div>
  );
}

/** "as of 4 min ago", greyed (with the reason) when the snapshot no longer holds. */
function AsOf({ iso, stale }: { iso: string; stale: boolean }) {
  const now = useServerNow(15_000);
  return (
    <span className={stale ? "text-slate-400" : ""} data-testid="limit-as-of">
      as of {now === null ? <Timestamp iso={iso} withDate={false} /> : <time dateTime={iso}>{relativeTime(Date.parse(iso), now)}</time>}
      {stale && <span className="sr-only"> (stale)</span>}
    </span>
  );
}
