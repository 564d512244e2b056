import { EXPORT_KINDS } from "@/lib/insights/stream";
import type { IncidentView } from "@/lib/wire/types";

/**
 * The window an incident review looks at: from its first notice to its end (now while open),
 * rounded up to the next minute so the last notice lies inside the half-open range.
 */
export function incidentRange(incident: Pick<IncidentView, "startedAt" | "endedAt">, serverTime: string): { from: string; to: string } {
  const end = Date.parse(incident.endedAt ?? serverTime);
  return { from: incident.startedAt, to: new Date(Math.ceil((end + 1) / 60_000) * 60_000).toISOString() };
}

/** The filter of exactly that window and scope, as insights and the exports take it. */
function scopeQuery(incident: IncidentView, serverTime: string): URLSearchParams {
  const params = new URLSearchParams(incidentRange(incident, serverTime));
  params.set("kind", incident.kind);
  if (incident.provider) params.set("provider", incident.provider);
  if (incident.model) params.set("model", incident.model);
  return params;
}

export function incidentInsightsHref(incident: IncidentView, serverTime: string): string {
  return `/insights?${scopeQuery(incident, serverTime)}`;
}

export function incidentExportHrefs(incident: IncidentView, serverTime: string): { kind: (typeof EXPORT_KINDS)[number]; href: string }[] {
  return EXPORT_KINDS.map((kind) => ({ kind, href: `/api/v1/exports/${kind}?${scopeQuery(incident, serverTime)}&format=csv` }));
}
