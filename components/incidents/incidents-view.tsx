"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { incidentsQuery } from "@/lib/client/queries";
import { humanDuration } from "@/lib/retry/duration";
import { INCIDENT_STATE_FILTERS, type IncidentList, type IncidentStateFilter } from "@/lib/wire/types";
import { usePollInterval } from "@/components/live/live-updates";
import { Timestamp } from "@/components/time/timestamp";
import { styles } from "@/components/ui/controls";
import { incidentStateLabel, incidentTitle } from "./incident-banners";

const FILTER_LABELS: Record<IncidentStateFilter, string> = { all: "All", open: "Open", closed: "Past" };

/** Open and past incidents, newest first, live. */
export function IncidentsView({ state, initial }: { state: IncidentStateFilter; initial: IncidentList }) {
  const refetchInterval = usePollInterval();
  const { data } = useQuery({ ...incidentsQuery(state), initialData: initial, refetchInterval });
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-4">
        <h1 className="text-2xl font-semibold tracking-tight">Incidents</h1>
        <nav aria-label="Which incidents" className="flex gap-1 text-sm">
          {INCIDENT_STATE_FILTERS.map((option) => (
            <Link
              key={option}
              href={option === "all" ? "/incidents" : `/incidents?state=${option}`}
              aria-current={option === state ? "page" : undefined}
              className={`rounded px-3 py-1 ring-1 ring-slate-300 ${option === state ? "bg-slate-800 text-white" : "bg-white text-slate-700 hover:bg-slate-100"}`}
            >
              {FILTER_LABELS[option]}
            </Link>
          ))}
        </nav>
      </div>
      {data.incidents.length === 0 ? (
        <p className="rounded-md bg-white p-6 text-slate-600 ring-1 ring-slate-200">No incidents here: no wall has been hit by several threads at once.</p>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
          <table className="w-full text-left text-sm" data-testid="incidents-table">
            <thead className={styles.thead}>
              <tr>
                <th scope="col" className={styles.th}>Incident</th>
                <th scope="col" className={styles.th}>Scope</th>
                <th scope="col" className={styles.th}>State</th>
                <th scope="col" className={styles.th}>Threads</th>
                <th scope="col" className={styles.th}>Notices</th>
                <th scope="col" className={styles.th}>Started</th>
                <th scope="col" className={styles.th}>Ended</th>
                <th scope="col" className={styles.th}>Time lost</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {data.incidents.map((incident) => (
                <tr key={incident.id} data-testid="incident-row" data-incident-id={incident.id}>
                  <td className={styles.td}>
                    <Link href={`/incidents/${incident.id}`} className="font-medium text-sky-800 underline-offset-2 hover:underline">
                      {incidentTitle(incident)}
                    </Link>
                  </td>
                  <td className={styles.td}>{incident.scope}</td>
                  <td className={styles.td}>{incidentStateLabel(incident)}</td>
                  <td className={styles.td}>{incident.threadCount}</td>
                  <td className={styles.td}>{incident.notices}</td>
                  <td className={styles.td}><Timestamp iso={incident.startedAt} /></td>
                  <td className={styles.td}><Timestamp iso={incident.endedAt} /></td>
                  <td className={styles.td}>{humanDuration(incident.timeLostMs)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
