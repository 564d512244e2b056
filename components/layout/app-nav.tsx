import Link from "next/link";
import { AccountMenu } from "@/components/auth/account-menu";
import { TimeZoneSwitch } from "@/components/time/time-zone-switch";
import { roleAllows, type Role } from "@/lib/auth/roles";

const LINKS: { href: string; label: string; needs: Role }[] = [
  { href: "/", label: "Board", needs: "viewer" },
  { href: "/insights", label: "Insights", needs: "viewer" },
  { href: "/limits", label: "Limits", needs: "viewer" },
  { href: "/incidents", label: "Incidents", needs: "viewer" },
  { href: "/sources", label: "Sources", needs: "viewer" },
  { href: "/audit", label: "Audit", needs: "viewer" },
  { href: "/alerts", label: "Alerts", needs: "admin" },
  { href: "/people", label: "People", needs: "admin" },
];

/**
 * The navigation: the links the signed-in person's role may open (the sign-in page shows none;
 * the pages check again).
 */
export function AppNav({ role }: { role: Role | null }) {
  return (
    <header className="border-b border-slate-200 bg-white">
      <nav aria-label="Main" className="mx-auto flex max-w-[1800px] items-center gap-6 px-4 py-3 lg:px-8">
        <Link href="/" className="text-lg font-semibold tracking-tight text-slate-900">
          <span aria-hidden className="mr-1 text-amber-500">◎</span>Retry Radar
        </Link>
        {role && <ul className="flex gap-1 text-sm">
          {LINKS.filter((link) => roleAllows(role, link.needs)).map((link) => (
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
