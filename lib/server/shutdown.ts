import { shared } from "@/lib/process-state";
/**
 * What a stopping server does before it exits, besides draining its answers: let go of what it
 * holds for the other instances (the watchdog's leadership), so they take over at once instead
 * of after a lease. The steps are process-wide (lib/process-state.ts) because the listener that catches the signal
 * (lib/server/listener/serve.ts, bundled on its own) and the code that registers them (started by
 * instrumentation.ts inside Next's build) are separate module instances in one process.
 */
type Step = () => Promise<void>;


const steps = () => shared("shutdownSteps", (): Set<Step> => new Set());

/** Runs `step` when the server stops gracefully; the returned function withdraws it. */
export function beforeShutdown(step: Step): () => void {
  steps().add(step);
  return () => void steps().delete(step);
}

/** Runs every registered step at once; one that fails does not hold back the others. */
export async function runShutdownSteps(): Promise<void> {
  const pending = [...steps()];
  steps().clear();
  await Promise.allSettled(pending.map((step) => step()));
}
