import Link from "next/link";
import { THREAD_STATUSES } from "@/lib/retry/types";
import { statusLabel } from "@/lib/ui/format";

/** Counts per status for the current filter; each links to the board narrowed to that status. */
export function StatusCounts({ counts, queryString }: { counts: Record<string, number>; queryString: string }) {
  const params = new URLSearchParams(queryString);
  const active = new Set((params.get("status") ?? "").split(",").filter(Boolean));
  const hrefFor = (status: string | null) => {
    const next = new URLSearchParams(queryString);
    next.delete("page");
    if (status) next.set("status", status);
    else next.delete("status");
    const text = next.toString();
    return text ? `/?${text}` : "/";
  };
  const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
  return (
    <nav aria-label="Threads by status" data-testid="status-counts">
      <ul className="flex flex-wrap gap-2 text-sm">
        <li>
          <Link href={hrefFor(null)} aria-current={active.size === 0 ? "page" : undefined} className={chip(active.size === 0)}>
            all <span className="font-semibold tabular-nums">{total}</span>
          </Link>
        </li>
        {THREAD_STATUSES.filter((status) => counts[status]).map((status) => (
          <li key={status}>
            <Link href={hrefFor(status)} data-testid={`count-${status}`} aria-current={active.has(status) ? "page" : undefined} className={chip(active.has(status))}>
              {statusLabel(status)} <span className="font-semibold tabular-nums">{counts[status]}</span>
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function chip(selected: boolean): string {
  return `inline-flex items-center gap-1.5 rounded-full px-3 py-1 ring-1 focus-visible:outline-2 focus-visible:outline-sky-600 ${
    selected ? "bg-slate-800 text-white ring-slate-800" : "bg-white text-slate-700 ring-slate-300 hover:bg-slate-100"
  }`;
}
