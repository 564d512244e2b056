import type { Metadata } from "next";
import { LimitsView } from "@/components/limits/limits-view";
import { read } from "@/lib/server/off-thread";
import { pageAccess } from "@/lib/server/page-access";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Limits" };

/** Every usage window: how full, when it resets, and which threads wait on it. */
export default async function LimitsPage() {
  await pageAccess("viewer", "/limits");
  return <LimitsView initial={await read("limits", Date.now())} />;
}
