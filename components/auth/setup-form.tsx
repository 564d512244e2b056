"use client";

import { useActionState } from "react";
import { setUp } from "@/lib/actions/setup";
import { Field, styles } from "@/components/ui/controls";

/** The first admin's account, from the one-time setup link. */
export function SetupForm({ code }: { code: string }) {
  const [outcome, submit, pending] = useActionState(setUp, null);
  return (
    <form action={submit} className="space-y-3" aria-label="Create the first admin">
      <input type="hidden" name="code" value={code} />
      <Field label="Your name">
        <input name="name" autoComplete="name" className={styles.control} data-testid="setup-name" />
      </Field>
      <Field label="Email">
        <input name="email" type="email" autoComplete="username" required className={styles.control} data-testid="setup-email" />
      </Field>
      <Field label="Password (at least 10 characters)">
        <input name="password" type="password" autoComplete="new-password" minLength={10} required className={styles.control} data-testid="setup-password" />
      </Field>
      <button type="submit" disabled={pending} className={`${styles.primaryButton} w-full`} data-testid="setup-submit">
        {pending ? "Creating…" : "Create admin and sign in"}
      </button>
      {outcome && !outcome.ok && (
        <p role="alert" className="rounded-md bg-red-50 p-3 text-sm text-red-900">
          {outcome.error}
        </p>
      )}
    </form>
  );
}
