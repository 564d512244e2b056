"use client";

import { useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import { useRouter } from "next/navigation";
import { useTransition } from "react";
import { usePollInterval } from "@/components/live/live-updates";
import { CopyPermalink } from "@/components/threads/copy-permalink";
import { Timestamp } from "@/components/time/timestamp";
import { percent } from "@/lib/insights/axis";
import { insightsQueryString, type InsightsQuery } from "@/lib/insights/range";
import { EXPORT_FORMATS, EXPORT_KINDS } from "@/lib/insights/stream";
import { insightsQuery } from "@/lib/client/queries";
import { humanDuration } from "@/lib/ui/format";
import type { FilterOptions, InsightsResponse } from "@/lib/wire/types";
import { InsightsControls } from "./insights-controls";
import { TopThreads } from "./top-threads";
import { styles } from "@/components/ui/controls";

// The charts bring recharts, the heaviest code of any page: each loads in its own chunk after the
// page's first load (still rendered on the server, so the tables are there from the start).
const NoticesChart = dynamic(() => import("./notices-chart").then((m) => m.NoticesChart));
const OutcomesChart = dynamic(() => import("./outcomes-chart").then((m) => m.OutcomesChart));
const TimeLostChart = dynamic(() => import("./time-lost-chart").then((m) => m.TimeLostChart));
const GapChart = dynamic(() => import("./gap-chart").then((m) => m.GapChart));
const EarlyAgentsChart = dynamic(() => import("./early-agents-chart").then((m) => m.EarlyAgentsChart));

/** A relative range ("last hour") moves with the clock: refresh it this often even when nothing changes. */
const REFRESH_MS = 60_000;

/** Live like the board: refetched when the stream says threads changed, polled while it is down. */
export function InsightsView({ initial, query, options }: { initial: InsightsResponse; query: InsightsQuery; options: FilterOptions }) {
  const router = useRouter();
  const pollInterval = usePollInterval();
  const relative = query.range.preset !== "custom";
  const { data } = useQuery({
    ...insightsQuery(insightsQueryString(query)),
    initialData: initial,
    refetchInterval: pollInterval === false ? (relative ? REFRESH_MS : false) : pollInterval,
  });
  const [pending, startTransition] = useTransition();
  const hrefFor = (change: Partial<InsightsQuery>) => `/insights${insightsQueryString({ ...query, ...change })}`;
  const navigate = (href: string) => startTransition(() => router.push(href, { scroll: false }));
  const permalink = `/insights${insightsQueryString(query, { absolute: true })}`;
  const exportQuery = insightsQueryString({ ...query, split: "kind" }, { absolute: true }).replace(/^\?/, "");

  const { totals } = data;
  const n = (value: number) => value.toLocaleString("en");
  const stats = [
    { id: "notices", label: "Retry notices", value: n(totals.notices), detail: `per ${data.range.bucket} below` },
    { id: "recovery-ratio", label: "Recovery ratio", value: percent(totals.recoveryRatio), detail: "of episodes that recovered or ran out" },
    { id: "episodes", label: "Episodes ended", value: n(totals.episodesEnded), detail: `${n(totals.episodesOpen)} still open at the range end` },
    { id: "time-lost", label: "Time lost waiting", value: humanDuration(totals.timeLostMs), detail: "sum of backoff" },
    {
      id: "attempts-per-episode",
      label: "Attempts per episode",
      value: totals.attemptsPerEpisode === null ? "—" : totals.attemptsPerEpisode.toFixed(1),
      detail: `${n(totals.attempts)} retries, those agents reported at give-up included`,
    },
    { id: "early-share", label: "Retries earlier than advised", value: percent(totals.earlyShare), detail: `${n(totals.attemptsEarly)} of ${n(totals.attemptsJudged)} judged` },
  ];

  return (
    <div className="space-y-4" data-testid="insights" aria-busy={pending}>
      <div className="flex flex-wrap items-center gap-x-4 gap-y-2">
        <h1 className="text-2xl font-semibold tracking-tight">Insights</h1>
        <p className="text-sm text-slate-700" data-testid="insights-range" data-from={data.range.from} data-to={data.range.to}>
          <Timestamp iso={data.range.from} /> – <Timestamp iso={data.range.to} />
          <span className="text-slate-500"> · per {data.range.bucket}</span>
        </p>
        <span aria-live="polite" className="text-sm text-slate-500">
          {pending ? "Updating…" : ""}
        </span>
        <div className="ml-auto flex flex-wrap items-center gap-2 text-sm">
          <a href={permalink} data-testid="insights-permalink" className={`${styles.chipButton} text-sky-800`}>
            Incident permalink
          </a>
          <CopyPermalink path={permalink} />
          <details className="relative" data-testid="export-menu">
            <summary className={`${styles.chipButton} cursor-pointer list-none`}>
              Export ▾
            </summary>
            <div className="absolute right-0 z-10 mt-1 w-64 rounded-md border border-slate-200 bg-white p-2 shadow-lg">
              <p className="px-1 pb-1 text-xs text-slate-600">This filter and range, streamed:</p>
              <ul className="space-y-1">
                {EXPORT_KINDS.map((kind) => (
                  <li key={kind} className="flex items-center gap-2">
                    <span className="w-20 capitalize text-slate-700">{kind}</span>
                    {EXPORT_FORMATS.map((format) => (
                      <a key={format} href={`/api/v1/exports/${kind}?${exportQuery}${exportQuery ? "&" : ""}format=${format}`} data-testid={`export-${kind}-${format}`} className="rounded px-1.5 py-0.5 text-xs ring-1 ring-slate-300 hover:bg-slate-100">
                        {format.toUpperCase()}
                      </a>
                    ))}
                  </li>
                ))}
              </ul>
            </div>
          </details>
        </div>
      </div>
      <InsightsControls query={query} options={options} hrefFor={hrefFor} navigate={navigate} />
      <dl className="grid grid-cols-2 gap-3 md:grid-cols-3 xl:grid-cols-6">
        {stats.map((stat) => (
          <div key={stat.id} className="rounded-lg border border-slate-200 bg-white px-4 py-3" data-testid={`stat-${stat.id}`}>
            <dt className="text-xs font-medium text-slate-600">{stat.label}</dt>
            <dd className="text-xl font-semibold tabular-nums text-slate-900">{stat.value}</dd>
            <dd className="text-xs text-slate-500">{stat.detail}</dd>
          </div>
        ))}
      </dl>
      <div className={`grid gap-4 xl:grid-cols-2 ${pending ? "opacity-60 transition-opacity" : ""}`}>
        <NoticesChart data={data} splitHref={(split) => hrefFor({ split })} />
        <OutcomesChart data={data} />
        <TimeLostChart data={data} />
        <GapChart data={data} />
        <EarlyAgentsChart data={data} />
        <TopThreads data={data} />
      </div>
    </div>
  );
}
