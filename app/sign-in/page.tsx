import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { SignInForm } from "@/components/auth/sign-in-form";
import { ssoFailureMessage } from "@/lib/auth/sso";
import { oidcSettings } from "@/lib/config";
import { signedInPrincipal } from "@/lib/server/page-access";
import { localPath } from "@/lib/validation";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const next = localPath.parse(typeof params.next === "string" ? params.next : "/");
  if (await signedInPrincipal()) redirect(next);
  return (
    <div className="mx-auto mt-12 max-w-sm rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
      <h1 className="mb-4 text-xl font-semibold tracking-tight">Sign in to Retry Radar</h1>
      <SignInForm next={next} sso={oidcSettings() !== null} ssoError={ssoFailureMessage(typeof params.error === "string" ? params.error : undefined)} />
    </div>
  );
}
