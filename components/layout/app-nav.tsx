import Link from "next/link";
import { AccountMenu } from "@/components/auth/account-menu";
import { TimeZoneSwitch } from "@/components/time/time-zone-switch";

const LINKS = [
  { href: "/", label: "Board" },
  { href: "/insights", label: "Insights" },
  { href: "/limits", label: "Limits" },
  { href: "/sources", label: "Sources" },
  { href: "/audit", label: "Audit" },
];

/** The navigation; its links only once someone is signed in (the sign-in page shows none). */
export function AppNav({ signedIn }: { signedIn: boolean }) {
  return (
    <header className="border-b border-slate-200 bg-white">
      <nav aria-label="Main" className="mx-auto flex max-w-[1800px] items-center gap-6 px-4 py-3 lg:px-8">
        <Link href="/" className="text-lg font-semibold tracking-tight text-slate-900">
          <span aria-hidden className="mr-1 text-amber-500">◎</span>Retry Radar
        </Link>
        {signedIn && <ul className="flex gap-1 text-sm">
          {LINKS.map((link) => (
            <li key={link.href}>
              <Link
                href={link.href}
                className="rounded px-3 py-1.5 text-slate-700 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-sky-600"
              >
                {link.label}
              </Link>
            </li>
          ))}
        </ul>}
        <div className="ml-auto flex items-center gap-4">
          <TimeZoneSwitch />
          <AccountMenu />
        </div>
      </nav>
    </header>
  );
}
