import { continueRoute } from "@/lib/server/continue-route";

export const dynamic = "force-dynamic";

/** Retry now: interrupt a thread waiting out a backoff, then `continue` it. */
export const POST = continueRoute("retry-now", "Retry now");
