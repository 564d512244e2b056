import type { Metadata } from "next";
import { SetupForm } from "@/components/auth/setup-form";
import { setupCodeValid } from "@/lib/auth/people";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Set up" };

/** The one-time setup link printed on first start: the first admin's account. */
export default async function SetupPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { code } = await searchParams;
  const valid = typeof code === "string" && (await setupCodeValid(code));
  return (
    <div className="mx-auto mt-12 max-w-sm rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
      <h1 className="mb-4 text-xl font-semibold tracking-tight">Set up Retry Radar</h1>
      {valid ? (
        <SetupForm code={code} />
      ) : (
        <p role="alert" className="text-sm text-slate-700">
          This setup link is not valid: it was already used or replaced. <a href="/sign-in" className="underline">Sign in</a>, or run{" "}
          <code>npm run users -- setup-link</code> on the server for a new one.
        </p>
      )}
    </div>
  );
}
