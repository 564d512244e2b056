import { pageAccess } from "@/lib/server/page-access";
import type { Metadata } from "next";
import Link from "next/link";
import { InsightsView } from "@/components/insights/insights-view";
import { parseInsightsQuery } from "@/lib/insights/range";
import { read } from "@/lib/server/off-thread";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Insights" };

/**
 * Capacity insights over a time range (?range=1h|24h|7d or ?from=&to=, the incident permalink)
 * and the board's filters. Numbers are computed here, in SQL, on every request; the charts
 * only draw them.
 */
export default async function InsightsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await pageAccess("viewer", "/insights");
  const now = Date.now();
  const parsed = parseInsightsQuery(await searchParams, now);
  if (!parsed.ok) {
    return (
      <p role="alert" className="rounded-md bg-red-50 p-4 text-red-900">
        This insights link has a bad parameter — {parsed.error}.{" "}
        <Link href="/insights" className="underline">
          Show the last 24 hours
        </Link>
        .
      </p>
    );
  }
  const [insights, options] = await Promise.all([read("insights", parsed.query, now), read("filterOptions")]);
  const data = { ...insights, serverTime: new Date(now).toISOString() };
  return <InsightsView initial={data} query={parsed.query} options={options} />;
}
