"use client";

import { useServerNow } from "@/components/time/server-clock";
import type { RecoveryRecord } from "@/lib/retry/types";
import { StopButton } from "./stop-button";

/** "Model at capacity. Retrying in ~N min, attempt k/3", with Stop retrying; or why it was cancelled. */
export function RecoveryNotice({ recovery, threadKey, threadId }: { recovery: RecoveryRecord; threadKey: number; threadId: string }) {
  const now = useServerNow(1000);
  if (recovery.state === "cancelled") {
    return (
      <p data-testid="recovery-notice" data-state="cancelled" className="rounded bg-slate-100 p-3 text-sm text-slate-800">
        Capacity recovery cancelled{recovery.cancelledReason ? `: ${recovery.cancelledReason}` : "."}
      </p>
    );
  }
  if (recovery.state !== "scheduled") return null;
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
