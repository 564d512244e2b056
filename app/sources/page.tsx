import { pageAccess } from "@/lib/server/page-access";
import type { Metadata } from "next";
import { config, publicUrl } from "@/lib/config";
import { listSourceOverviews } from "@/lib/db/sources";
import { countUsage } from "@/lib/server/usage";
import { PRESET_NAMES } from "@/lib/retry";
import { SourcesView } from "@/components/sources/sources-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sources" };

export default async function SourcesPage() {
  await pageAccess("viewer", "/sources");
  // The page shows usage up to this moment, not as of the last periodic count.
  await countUsage();
  const sources = await listSourceOverviews();
  const quota = { events: config().RADAR_SOURCE_MAX_EVENTS, bytes: config().RADAR_SOURCE_MAX_BYTES };
  return <SourcesView sources={sources} presets={[...PRESET_NAMES]} quota={quota} endpoint={publicUrl()} />;
}
