"use client";

import { useActionState } from "react";
import { signIn } from "@/lib/actions/sign-in";
import { signInWithSso } from "@/lib/actions/sign-in-sso";
import { Field, styles } from "@/components/ui/controls";

/** Email and password, and single sign-on when the server has it configured. */
export function SignInForm({ next, sso, ssoError }: { next: string; sso: boolean; ssoError: string | null }) {
  const [outcome, submit, pending] = useActionState(signIn, null);
  const [ssoOutcome, startSso, ssoPending] = useActionState(signInWithSso, null);
  const error = outcome && !outcome.ok ? outcome.error : ssoOutcome && !ssoOutcome.ok ? ssoOutcome.error : ssoError;
  return (
    <div className="space-y-4">
      <form action={submit} className="space-y-3" aria-label="Sign in with email and password">
        <input type="hidden" name="next" value={next} />
        <Field label="Email">
          <input name="email" type="email" autoComplete="username" required className={styles.control} data-testid="sign-in-email" />
        </Field>
        <Field label="Password">
          <input name="password" type="password" autoComplete="current-password" required className={styles.control} data-testid="sign-in-password" />
        </Field>
        <button type="submit" disabled={pending} className={`${styles.primaryButton} w-full`} data-testid="sign-in-submit">
          {pending ? "Signing in…" : "Sign in"}
        </button>
      </form>
      {sso && (
        <form action={startSso}>
          <input type="hidden" name="next" value={next} />
          <button type="submit" disabled={ssoPending} className={`${styles.secondaryButton} w-full`} data-testid="sign-in-sso">
            Sign in with single sign-on
          </button>
        </form>
      )}
      {error && (
        <p role="alert" className="rounded-md bg-red-50 p-3 text-sm text-red-900" data-testid="sign-in-error">
          {error}
        </p>
      )}
    </div>
  );
}
