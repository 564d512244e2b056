"use client";

import { useTransition } from "react";
import { signOut } from "@/lib/actions/sign-out";
import { useSignedIn } from "@/components/layout/signed-in";

/** Who is signed in, their role, and signing out (here or everywhere). */
export function AccountMenu() {
  const signedIn = useSignedIn();
  const [pending, startTransition] = useTransition();
  if (!signedIn) return null;
  const leave = (everywhere: boolean) =>
    startTransition(async () => {
      await signOut({ everywhere });
      window.location.assign("/sign-in");
    });
  return (
    <div className="flex items-center gap-2 text-sm" data-testid="account-menu">
      <span className="text-slate-700">
        <span data-testid="signed-in-name">{signedIn.displayName}</span> · <span data-testid="signed-in-role">{signedIn.role}</span>
      </span>
      <button type="button" disabled={pending} onClick={() => leave(false)} className="rounded px-2 py-1 text-slate-700 ring-1 ring-slate-300 hover:bg-slate-100" data-testid="sign-out">
        Sign out
      </button>
      <button type="button" disabled={pending} onClick={() => leave(true)} className="rounded px-2 py-1 text-slate-700 hover:bg-slate-100" data-testid="sign-out-everywhere" title="End every session of yours, on every device">
        Sign out everywhere
      </button>
    </div>
  );
}
