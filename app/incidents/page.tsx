import type { Metadata } from "next";
import { IncidentsView } from "@/components/incidents/incidents-view";
import { listIncidents } from "@/lib/db/incidents";
import { pageAccess } from "@/lib/server/page-access";
import { INCIDENT_STATE_FILTERS, type IncidentStateFilter } from "@/lib/wire/types";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Incidents" };

/** Open and past incidents (`?state=open|closed` in the URL). */
export default async function IncidentsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await pageAccess("viewer", "/incidents");
  const given = (await searchParams).state;
  const state: IncidentStateFilter = INCIDENT_STATE_FILTERS.find((s) => s === given) ?? "all";
  return <IncidentsView state={state} initial={await listIncidents(state)} />;
}
