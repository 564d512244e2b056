import type { Metadata } from "next";
import { alertSettings } from "@/lib/config";
import { alertsOverview } from "@/lib/db/alerts";
import { pageAccess } from "@/lib/server/page-access";
import { AlertsView } from "@/components/alerts/alerts-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Alerts" };

/** Where alerts go, which facts raise them, and every delivery with its result: an admin's page. */
export default async function AlertsPage() {
  const { principal, allowed } = await pageAccess("admin", "/alerts");
  if (!allowed) {
    return (
      <div className="space-y-4">
        <h1 className="text-2xl font-semibold tracking-tight">Alerts</h1>
        <p role="alert" data-testid="needs-role" className="rounded-lg border border-amber-300 bg-amber-50 p-4 text-slate-800">
          Managing alerts needs the admin role; {principal.actor} is a {principal.role}. Ask an admin.
        </p>
      </div>
    );
  }
  return <AlertsView initial={await alertsOverview(Date.now())} allow={alertSettings().allow} />;
}
