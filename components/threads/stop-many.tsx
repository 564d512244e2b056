"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useRef, useState, useTransition, type ReactNode } from "react";
import { queryKeys } from "@/lib/client/queries";
import { styles } from "@/components/ui/controls";
import { useCan } from "@/components/layout/signed-in";

/** What a bulk stop action answers. */
export type StopManyOutcome = { ok: true; stopping: number; skipped?: number } | { ok: false; error: string };

const threads = (n: number) => `${n} thread${n === 1 ? "" : "s"}`;

/** Threads whose source cannot carry out a stop are skipped, and the operator is told how many. */
function stoppedMessage(stopping: number, skipped = 0): string {
  return `Stopping ${threads(stopping)}.` + (skipped ? ` Skipped ${threads(skipped)} that nothing can reach (no relay).` : "");
}

/**
 * A bulk stop ("Stop all N matching", "Stop all in this incident"): a confirmation that names
 * the count and asks why, then one server action; operators only.
 */
export function StopMany({
  count,
  label,
  description,
  testId,
  run,
}: {
  count: number;
  /** The button's text. */
  label: ReactNode;
  description: ReactNode;
  /** Prefix of the test ids of the button, its confirmation and its message. */
  testId: string;
  run: (reason: string | undefined) => Promise<StopManyOutcome>;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const queryClient = useQueryClient();
  const [pending, startTransition] = useTransition();
  const [message, setMessage] = useState<string | null>(null);
  const [reason, setReason] = useState("");
  const canStop = useCan("operator");
  const titleId = `${testId}-title`;

  const confirm = () =>
    startTransition(async () => {
      const outcome = await run(reason || undefined);
      setMessage(outcome.ok ? stoppedMessage(outcome.stopping, outcome.skipped) : outcome.error);
      if (outcome.ok) dialog.current?.close();
      await queryClient.invalidateQueries({ queryKey: queryKeys.threads });
      await queryClient.invalidateQueries({ queryKey: queryKeys.incidents });
    });

  if (!canStop) return null;
  return (
    <div className="flex items-center gap-3">
      {message && (
        <span role="status" className="text-sm text-slate-700" data-testid={`${testId}-message`}>
          {message}
        </span>
      )}
      <button
        type="button"
        data-testid={testId}
        disabled={count === 0}
        onClick={() => {
          setMessage(null);
          dialog.current?.showModal();
        }}
        className="rounded-md border border-red-700 bg-white px-3 py-1.5 text-sm font-semibold text-red-800 hover:bg-red-50 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-red-700 disabled:cursor-not-allowed disabled:border-slate-300 disabled:text-slate-400"
      >
        {label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId} className="m-auto w-[28rem] rounded-lg p-0 shadow-xl backdrop:bg-slate-900/40">
        <form
          method="dialog"
          className="space-y-4 p-5"
          onSubmit={(event) => {
            event.preventDefault();
            confirm();
          }}
        >
          <h2 id={titleId} className="text-lg font-semibold">
            Stop retrying on {threads(count)}?
          </h2>
          <p className="text-sm text-slate-700">{description} Each stop is recorded in the audit log.</p>
          <label className="flex flex-col gap-1 text-sm font-medium text-slate-700">
            Why (for the audit log)
            <input value={reason} onChange={(e) => setReason(e.target.value)} className={`${styles.control} font-normal`} placeholder="e.g. provider incident, stop burning quota" />
          </label>
          <div className="flex justify-end gap-2">
            <button type="button" onClick={() => dialog.current?.close()} className={styles.secondaryButton}>
              Cancel
            </button>
            <button type="submit" disabled={pending} data-testid={`${testId}-confirm`} className={`${styles.dangerButton} text-sm`}>
              {pending ? "Stopping…" : `Stop ${threads(count)}`}
            </button>
          </div>
        </form>
      </dialog>
    </div>
  );
}
