"use client";

import { useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import Link from "next/link";
import { incidentQuery } from "@/lib/client/queries";
import { humanDuration } from "@/lib/retry/duration";
import type { IncidentDetail } from "@/lib/wire/types";
import { ChartCard } from "@/components/insights/chart-card";
import { usePollInterval } from "@/components/live/live-updates";
import { StatusBadge } from "@/components/threads/status-badge";
import { threadHref } from "@/components/threads/links";
import { Timestamp } from "@/components/time/timestamp";
import { styles } from "@/components/ui/controls";
import { AcknowledgeIncident } from "./acknowledge-incident-button";
import { SilenceIncident } from "./silence-incident-control";
import { incidentStateLabel, incidentTitle } from "./incident-banners";
import { IncidentNotes } from "./incident-notes";
import { incidentExportHrefs, incidentInsightsHref } from "./links";

const TimelineChart = dynamic(() => import("./incident-timeline-chart").then((m) => m.IncidentTimelineChart), {
  ssr: false,
  loading: () => <div className="h-[260px]" />,
});

/** An incident's review: what, when, who was hit, what it cost, and links to exactly its window. */
export function IncidentPage({ initial }: { initial: IncidentDetail }) {
  const refetchInterval = usePollInterval();
  const { data: incident } = useQuery({ ...incidentQuery(initial.id), initialData: initial, refetchInterval });
  const facts: [string, React.ReactNode][] = [
    ["State", incidentStateLabel(incident)],
    ["First notice", <Timestamp key="first" iso={incident.startedAt} />],
    ["Last notice", <Timestamp key="last" iso={incident.lastNoticeAt} />],
    ["Ended", <Timestamp key="ended" iso={incident.endedAt} />],
    ["Resets", <Timestamp key="resets" iso={incident.resetAt} />],
    ["Threads", incident.threadCount],
    ["Notices", incident.notices],
    ["Retried early", incident.earlyRetries],
    ["Time lost", humanDuration(incident.timeLostMs)],
  ];
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-4">
        <h1 className="text-2xl font-semibold tracking-tight">
          {incidentTitle(incident)} — {incident.scope}
        </h1>
        <div className="ml-auto flex flex-wrap items-center gap-2 text-sm">
          <AcknowledgeIncident incident={incident} />
        <SilenceIncident incident={incident} />
          <Link href={incidentInsightsHref(incident, incident.serverTime)} data-testid="incident-insights-link" className={`${styles.chipButton} text-sky-800`}>
            Insights for this window
          </Link>
          {incidentExportHrefs(incident, incident.serverTime).map(({ kind, href }) => (
            <a key={kind} href={href} data-testid={`incident-export-${kind}`} className={`${styles.chipButton} capitalize`}>
              {kind} (CSV)
            </a>
          ))}
        </div>
      </div>
      <dl className="grid grid-cols-2 gap-3 rounded-lg bg-white p-4 text-sm ring-1 ring-slate-200 sm:grid-cols-3 lg:grid-cols-5">
        {facts.map(([label, value]) => (
          <div key={label}>
            <dt className="text-xs uppercase tracking-wide text-slate-500">{label}</dt>
            <dd className="font-medium">{value}</dd>
          </div>
        ))}
      </dl>
      <ChartCard
        id="incident-timeline"
        title="Notices per minute, by thread"
        description={`${incident.notices} notices from ${incident.threadCount} threads.`}
        empty={incident.timeline.length === 0}
        emptyText="No notices of these threads are kept for this window."
        chart={<TimelineChart detail={incident} />}
        table={
          <table className="text-sm">
            <thead>
              <tr>
                <th scope="col" className={styles.th}>Minute</th>
                <th scope="col" className={styles.th}>Thread</th>
                <th scope="col" className={styles.th}>Notices</th>
              </tr>
            </thead>
            <tbody>
              {incident.timeline.map((r) => (
                <tr key={`${r.minute}-${r.thread}`}>
                  <td className={styles.td}><Timestamp iso={r.minute} /></td>
                  <td className={styles.td}>{incident.threads.find((t) => t.key === r.thread)?.id ?? r.thread}</td>
                  <td className={styles.td}>{r.notices}</td>
                </tr>
              ))}
            </tbody>
          </table>
        }
      />
      <IncidentNotes incident={incident} />
      <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
        <table className="w-full text-left text-sm" data-testid="incident-threads">
          <caption className="px-3 py-2 text-left font-semibold">Threads and their outcomes</caption>
          <thead className={styles.thead}>
            <tr>
              <th scope="col" className={styles.th}>Thread</th>
              <th scope="col" className={styles.th}>Source</th>
              <th scope="col" className={styles.th}>Status now</th>
              <th scope="col" className={styles.th}>First notice</th>
              <th scope="col" className={styles.th}>Last notice</th>
              <th scope="col" className={styles.th}>Notices</th>
              <th scope="col" className={styles.th}>Recovered</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {incident.threads.map((t) => (
              <tr key={t.key} data-testid="incident-thread" data-thread-key={t.key}>
                <td className={styles.td}>
                  <Link href={threadHref(t)} className="text-sky-800 underline-offset-2 hover:underline">{t.title || t.id}</Link>
                </td>
                <td className={styles.td}>{t.source}</td>
                <td className={styles.td}><StatusBadge status={t.status} /></td>
                <td className={styles.td}><Timestamp iso={t.firstNoticeAt} /></td>
                <td className={styles.td}><Timestamp iso={t.lastNoticeAt} /></td>
                <td className={styles.td}>{t.notices}</td>
                <td className={styles.td}><Timestamp iso={t.recoveredAt} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
