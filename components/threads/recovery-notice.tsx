"use client";

import { useServerNow } from "@/components/time/server-clock";
import { ResumesAt } from "@/components/time/countdown";
import { RESUME_AT_RESET, RESUME_NOW, type RecoveryRecord } from "@/lib/retry/types";
import { StopButton } from "./stop-button";
import { ThreadCommand } from "./thread-command";
import { stopThread } from "@/lib/actions/stop-thread";

const CANCELLED: Record<string, string> = { [RESUME_AT_RESET]: "Resume at reset cancelled", [RESUME_NOW]: "Resume cancelled" };

/**
 * A scheduled continuation and its control: capacity recovery ("Model at capacity. Retrying in
 * ~N min, attempt k/3", Stop retrying) or resume at reset ("Resumes at 17:59 (in 2 h 03 min)",
 * Cancel, which is a stop); or why it was cancelled.
 */
export function RecoveryNotice({ recovery, threadKey, threadId }: { recovery: RecoveryRecord; threadKey: number; threadId: string }) {
  const now = useServerNow(1000);
  if (recovery.state === "cancelled") {
    return (
      <p data-testid="recovery-notice" data-state="cancelled" className="rounded bg-slate-100 p-3 text-sm text-slate-800">
        {CANCELLED[recovery.policy] ?? "Capacity recovery cancelled"}
        {recovery.cancelledReason ? `: ${recovery.cancelledReason}` : "."}
      </p>
    );
  }
  if (recovery.state !== "scheduled") return null;
  if (recovery.policy === RESUME_AT_RESET) {
    return (
      <div data-testid="recovery-notice" data-state="scheduled" className="flex flex-wrap items-center gap-3 rounded bg-indigo-50 p-3 text-sm text-indigo-950">
        <p>
          Usage limit. <ResumesAt at={new Date(recovery.dueAt).toISOString()} />.
        </p>
        <ThreadCommand
          label="Cancel"
          busyLabel="Cancelling…"
          testId="cancel-resume"
          ariaLabel={`Cancel the resume of thread ${threadId}`}
          done={["stopping"]}
          run={() => stopThread({ key: threadKey, reason: "Cancel resume at reset (dashboard)" })}
        />
      </div>
    );
  }
  const minutes = now === null ? null : Math.max(1, Math.round((recovery.dueAt - now) / 60_000));
  return (
    <div data-testid="recovery-notice" data-state="scheduled" className="flex flex-wrap items-center gap-3 rounded bg-indigo-50 p-3 text-sm text-indigo-950">
      <p>
        Model at capacity. Retrying in ~{minutes ?? "…"} min, attempt {recovery.attempt}/{recovery.max}.
      </p>
      <StopButton threadKey={threadKey} threadId={threadId} />
    </div>
  );
}
