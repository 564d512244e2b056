"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useState, useTransition } from "react";
import { queryKeys } from "@/lib/client/queries";
import { styles } from "@/components/ui/controls";
import { useCan } from "@/components/layout/signed-in";

const TONES = {
  primary: styles.primaryButton,
  secondary: styles.secondaryButton,
  danger: `${styles.dangerButton} shadow-sm disabled:text-slate-600`,
};

/** What a thread command answered: refused (`ok: false`), or done with a result that may say why nothing happened. */
type Answer = { ok: false; error: string } | { ok: true; result: { result: string; detail: string | null } };

/**
 * One operator button on a thread (Resume now, Retry now, Archive, Snooze…): runs its server
 * action, shows a refusal next to it, and refetches the threads. Hidden from viewers (the server
 * refuses them anyway).
 */
export function ThreadCommand({
  label,
  busyLabel,
  testId,
  ariaLabel,
  done,
  run,
  tone = "secondary",
  disabled,
  nothingDone,
}: {
  label: string;
  busyLabel: string;
  testId: string;
  ariaLabel: string;
  /** The results that mean it worked; any other is shown with its detail. */
  done: string[];
  run: () => Promise<Answer>;
  tone?: "primary" | "secondary" | "danger";
  disabled?: boolean;
  /** What to say when it did nothing and the server gave no detail. */
  nothingDone?: string;
}) {
  const queryClient = useQueryClient();
  const [pending, startTransition] = useTransition();
  const [error, setError] = useState<string | null>(null);
  if (!useCan("operator")) return null;
  return (
    <span className="inline-flex flex-col items-start gap-1">
      <button
        type="button"
        data-testid={testId}
        disabled={disabled || pending}
        aria-label={ariaLabel}
        onClick={() =>
          startTransition(async () => {
            setError(null);
            const answer = await run();
            if (!answer.ok) setError(answer.error);
            else if (!done.includes(answer.result.result)) setError(answer.result.detail ?? nothingDone ?? `Nothing done (${answer.result.result}).`);
            await queryClient.invalidateQueries({ queryKey: queryKeys.threads });
          })
        }
        className={`${TONES[tone]} whitespace-nowrap text-xs`}
      >
        {pending ? busyLabel : label}
      </button>
      {error && (
        <span role="alert" className="text-xs text-red-800">
          {error}
        </span>
      )}
    </span>
  );
}
