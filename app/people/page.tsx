import type { Metadata } from "next";
import { apiKeyOverviews } from "@/lib/db/api-keys";
import { lockedAddresses, peopleOverview } from "@/lib/db/people";
import { pageAccess } from "@/lib/server/page-access";
import { PeopleView } from "@/components/people/people-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "People" };

/** Who may sign in, with which role, and the API keys scripts use: an admin's page. */
export default async function PeoplePage() {
  const { principal, allowed } = await pageAccess("admin", "/people");
  if (!allowed) {
    return (
      <div className="space-y-4">
        <h1 className="text-2xl font-semibold tracking-tight">People</h1>
        <p role="alert" data-testid="needs-role" className="rounded-lg border border-amber-300 bg-amber-50 p-4 text-slate-800">
          Managing people and API keys needs the admin role; {principal.actor} is a {principal.role}. Ask an admin.
        </p>
      </div>
    );
  }
  const [people, keys, addresses] = await Promise.all([peopleOverview(), apiKeyOverviews(), lockedAddresses()]);
  return <PeopleView people={people} keys={keys} addresses={addresses} me={principal.personId} />;
}
