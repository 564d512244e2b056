import { continueRoute } from "@/lib/server/continue-route";

export const dynamic = "force-dynamic";

/** Resume now: a `continue` for an exhausted, failed or broken thread. */
export const POST = continueRoute("resume", "Resume now");
