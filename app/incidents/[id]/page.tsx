import type { Metadata } from "next";
import Link from "next/link";
import { IncidentPage } from "@/components/incidents/incident-page";
import { incidentDetail } from "@/lib/db/incidents";
import { pageAccess } from "@/lib/server/page-access";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Incident" };

/** One incident, for its review: timeline, threads and outcomes, time lost, links to its window. */
export default async function IncidentRoute({ params }: { params: Promise<{ id: string }> }) {
  const { id: rawId } = await params;
  await pageAccess("viewer", `/incidents/${rawId}`);
  const id = decodeURIComponent(rawId);
  const detail = await incidentDetail(id);
  if (!detail) {
    return (
      <div role="alert" className="space-y-3 rounded-md bg-white p-6 ring-1 ring-slate-200">
        <h1 className="text-xl font-semibold">Incident not found</h1>
        <p>No incident &quot;{id}&quot;.</p>
        <Link href="/incidents" className="text-sky-800 underline">All incidents</Link>
      </div>
    );
  }
  return <IncidentPage initial={detail} />;
}
