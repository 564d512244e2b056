"use client";

import { useQueryClient } from "@tanstack/react-query";
import { queryKeys } from "@/lib/client/queries";
import { useState, useTransition } from "react";
import { stopThread } from "@/lib/actions/stop-thread";

/** Stop retrying: a server action; the row shows `stopping` at once and updates live after. */
export function StopButton({ threadKey, threadId, disabled }: { threadKey: number; threadId: string; disabled?: boolean }) {
  const queryClient = useQueryClient();
  const [pending, startTransition] = useTransition();
  const [error, setError] = useState<string | null>(null);
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
        className="whitespace-nowrap rounded-md bg-red-700 px-3 py-1.5 text-xs font-semibold text-white shadow-sm hover:bg-red-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-red-700 disabled:cursor-not-allowed disabled:bg-slate-300 disabled:text-slate-600"
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
