"use client";

import { useQueryClient } from "@tanstack/react-query";
import { queryKeys } from "@/lib/client/queries";
import { useRef, useState, useTransition } from "react";
import { stopMatching } from "@/lib/actions/stop-matching";
import { styles } from "@/components/ui/controls";
import { useCan } from "@/components/layout/signed-in";

/** "Stop all N matching": a confirmation that names the count, then one server action. */
export function StopAllMatching({ queryString, count }: { queryString: string; count: number }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const queryClient = useQueryClient();
  const [pending, startTransition] = useTransition();
  const [message, setMessage] = useState<string | null>(null);
  const [reason, setReason] = useState("");
  const canStop = useCan("operator");

  const confirm = () =>
    startTransition(async () => {
      const outcome = await stopMatching({ query: queryString, expected: count, reason: reason || undefined });
      setMessage(outcome.ok ? stopAllMessage(outcome.stopping, outcome.skipped) : outcome.error);
      if (outcome.ok) dialog.current?.close();
      await queryClient.invalidateQueries({ queryKey: queryKeys.threads });
    });

  if (!canStop) return null;
  return (
    <div className="flex items-center gap-3">
      {message && (
        <span role="status" className="text-sm text-slate-700" data-testid="stop-all-message">
          {message}
        </span>
      )}
      <button
        type="button"
        data-testid="stop-all"
        disabled={count === 0}
        onClick={() => {
          setMessage(null);
          dialog.current?.showModal();
        }}
        className="rounded-md border border-red-700 px-3 py-1.5 text-sm font-semibold text-red-800 hover:bg-red-50 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-red-700 disabled:cursor-not-allowed disabled:border-slate-300 disabled:text-slate-400"
      >
        Stop all {count} matching
      </button>
      <dialog ref={dialog} aria-labelledby="stop-all-title" className="m-auto w-[28rem] rounded-lg p-0 shadow-xl backdrop:bg-slate-900/40">
        <form
          method="dialog"
          className="space-y-4 p-5"
          onSubmit={(event) => {
            event.preventDefault();
            confirm();
          }}
        >
          <h2 id="stop-all-title" className="text-lg font-semibold">
            Stop retrying on {count} thread{count === 1 ? "" : "s"}?
          </h2>
          <p className="text-sm text-slate-700">
            Every active thread matching the current filter gets an interrupt directive. Each stop is recorded in the audit log.
          </p>
          <label className="flex flex-col gap-1 text-sm font-medium text-slate-700">
            Why (for the audit log)
            <input value={reason} onChange={(e) => setReason(e.target.value)} className={`${styles.control} font-normal`} placeholder="e.g. provider incident, stop burning quota" />
          </label>
          <div className="flex justify-end gap-2">
            <button type="button" onClick={() => dialog.current?.close()} className={styles.secondaryButton}>
              Cancel
            </button>
            <button type="submit" disabled={pending} data-testid="stop-all-confirm" className={`${styles.dangerButton} text-sm`}>
              {pending ? "Stopping…" : `Stop ${count} thread${count === 1 ? "" : "s"}`}
            </button>
          </div>
        </form>
      </dialog>
    </div>
  );
}

const threads = (n: number) => `${n} thread${n === 1 ? "" : "s"}`;

/** Threads whose source cannot carry out a stop are skipped, and the operator is told how many. */
function stopAllMessage(stopping: number, skipped: number): string {
  return `Stopping ${threads(stopping)}.` + (skipped ? ` Skipped ${threads(skipped)} that nothing can reach (no relay).` : "");
}
