"use client";

import { useQueryClient } from "@tanstack/react-query";
import { queryKeys } from "@/lib/client/queries";
import { useState, useTransition } from "react";
import { stopThread } from "@/lib/actions/stop-thread";
import { styles } from "@/components/ui/controls";
import { useCan } from "@/components/layout/signed-in";

/** Stop retrying: a server action; the row shows `stopping` at once and updates live after. */
export function StopButton({ threadKey, threadId, disabled }: { threadKey: number; threadId: string; disabled?: boolean }) {
  const queryClient = useQueryClient();
  const [pending, startTransition] = useTransition();
  const [error, setError] = useState<string | null>(null);
  // Only operators may stop; a viewer sees no control (the server refuses them anyway).
  if (!useCan("operator")) return null;
  return (
    <span className="inline-flex flex-col items-start gap-1">
      <button
        type="button"
        data-testid="stop-retrying"
        disabled={disabled || pending}
        aria-label={`Stop retrying thread ${threadId}`}
        onClick={() =>
          startTransition(async () => {
            setError(null);
            const outcome = await stopThread({ key: threadKey });
            if (!outcome.ok) setError(outcome.error);
            else if (outcome.result.result !== "stopping") setError(outcome.result.detail ?? "Nothing to stop.");
            await queryClient.invalidateQueries({ queryKey: queryKeys.threads });
          })
        }
        className={`${styles.dangerButton} whitespace-nowrap text-xs shadow-sm disabled:text-slate-600`}
      >
        {pending ? "Stopping…" : "Stop retrying"}
      </button>
      {error && (
        <span role="alert" className="text-xs text-red-800">
          {error}
        </span>
      )}
    </span>
  );
}
