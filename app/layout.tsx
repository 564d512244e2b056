import type { Metadata } from "next";
import { connection } from "next/server";
import type { ReactNode } from "react";
import { AppNav } from "@/components/layout/app-nav";
import { Providers } from "@/components/layout/providers";
import { SignedInProvider } from "@/components/layout/signed-in";
import { signedInPrincipal } from "@/lib/server/page-access";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Retry Radar", template: "%s · Retry Radar" },
  description: "Live retry and capacity observability for AI coding agents.",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page, the not-found page too, renders per request: its scripts need that load's CSP nonce.
  await connection();
  const principal = await signedInPrincipal();
  return (
    <html lang="en">
      <body className="min-h-screen bg-slate-50 text-slate-900 antialiased">
        <SignedInProvider value={principal && { role: principal.role, displayName: principal.displayName }}>
          <Providers>
            <AppNav role={principal?.role ?? null} />
            <main className="mx-auto max-w-[1800px] px-4 py-6 lg:px-8">{children}</main>
          </Providers>
        </SignedInProvider>
      </body>
    </html>
  );
}
