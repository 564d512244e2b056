"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useMemo } from "react";
import { incidentsQuery } from "@/lib/client/queries";
import { stopIncident } from "@/lib/actions/stop-incident";
import { kindLabel } from "@/lib/ui/format";
import type { IncidentList, IncidentView } from "@/lib/wire/types";
import { usePollInterval } from "@/components/live/live-updates";
import { StopMany } from "@/components/threads/stop-many";
import { Timestamp } from "@/components/time/timestamp";
import { AcknowledgeIncident } from "./acknowledge-incident-button";
import { SilenceIncident } from "./silence-incident-control";

/** The board's banners: one per open incident, live (an `incidents` notice refetches them). */
export function IncidentBanners({ initial }: { initial: IncidentList }) {
  const refetchInterval = usePollInterval();
  // Server-rendered data, so a change notice refetches rather than joins a first fetch still under way.
  const { data } = useQuery({ ...incidentsQuery("open"), initialData: initial, refetchInterval });
  const open = data.incidents;
  if (open.length === 0) return null;
  return (
    <section aria-label="Open incidents" className="space-y-2">
      {open.map((incident) => (
        <IncidentBanner key={incident.id} incident={incident} />
      ))}
    </section>
  );
}

/** "Rate limit incident — openai · gpt-5.5 — 12 threads retrying since 14:02 — resets ~14:30". */
export function incidentTitle(incident: Pick<IncidentView, "kind">): string {
  const kind = kindLabel(incident.kind);
  return `${kind.charAt(0).toUpperCase()}${kind.slice(1)} incident`;
}

/** "open", "closed (all threads recovered)" or "closed (quiet)". */
export function incidentStateLabel(incident: Pick<IncidentView, "state" | "closedBy">): string {
  if (incident.state === "open") return "open";
  return `closed (${incident.closedBy === "recovered" ? "all threads recovered" : "quiet"})`;
}

function IncidentBanner({ incident }: { incident: IncidentView }) {
  return (
    <div
      role="status"
      data-testid="incident-banner"
      data-incident-id={incident.id}
      className="flex flex-wrap items-center gap-x-3 gap-y-2 rounded-lg border border-amber-300 bg-amber-50 px-4 py-3 text-sm text-amber-950"
    >
      <span aria-hidden className="text-amber-600">▲</span>
      <span data-testid="incident-summary">
        <span className="font-semibold">{incidentTitle(incident)}</span> — {incident.scope} — {incident.threadCount} thread
        {incident.threadCount === 1 ? "" : "s"} retrying since <Timestamp iso={incident.startedAt} withDate={false} />
        {incident.resetAt && (
          <>
            {" "}
            — resets ~<Timestamp iso={incident.resetAt} withDate={false} />
          </>
        )}
      </span>
      <Link href={`/incidents/${incident.id}`} className="text-sky-800 underline" data-testid="incident-link">
        Details
      </Link>
      <div className="ml-auto flex items-center gap-3">
        <AcknowledgeIncident incident={incident} />
        <SilenceIncident incident={incident} />
        <StopMany
          count={incident.stoppable}
          testId="incident-stop-all"
          label={`Stop all in this incident (${incident.stoppable})`}
          description={`Every thread of this incident that is still active (${incident.stoppable} of ${incident.threadCount}) gets an interrupt directive.`}
          run={(reason) => stopIncident({ incidentId: incident.id, expected: incident.stoppable, reason })}
        />
      </div>
    </div>
  );
}

/** A board row's incident marker: the incident it links to and the label it shows on hover. */
export interface IncidentMarker {
  id: string;
  label: string;
}

/**
 * The marker of each thread in an open incident (the board's rows), built once per read of the
 * incidents, not on every render of the board: an incident may name thousands of threads.
 */
export function useIncidentMarkers(): Map<number, IncidentMarker> {
  const { data } = useQuery(incidentsQuery("open"));
  return useMemo(() => {
    const markers = new Map<number, IncidentMarker>();
    for (const incident of data?.incidents ?? []) {
      const marker = { id: incident.id, label: `${incidentTitle(incident)} — ${incident.scope}` };
      for (const key of incident.threadKeys) markers.set(key, marker);
    }
    return markers;
  }, [data]);
}
