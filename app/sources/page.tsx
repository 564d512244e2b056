import type { Metadata } from "next";
import { listSourceOverviews } from "@/lib/db/sources";
import { PRESET_NAMES } from "@/lib/retry";
import { SourcesView } from "@/components/sources/sources-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sources" };

export default async function SourcesPage() {
  const sources = await listSourceOverviews();
  return <SourcesView sources={sources} presets={[...PRESET_NAMES]} />;
}
