import Link from "next/link";
import { StatusBadge } from "@/components/threads/status-badge";
import { threadHref } from "@/components/threads/links";
import type { InsightsData } from "@/lib/insights/types";
import { humanDuration } from "@/lib/ui/format";
import { td, tdNum, th, thNum, thRow } from "./chart-card";

/** The threads that lost the most time waiting in the range, each linking to its thread page. */
export function TopThreads({ data }: { data: InsightsData }) {
  const rows = data.topThreads;
  return (
    <section aria-labelledby="top-threads-title" data-testid="top-threads" className="min-w-0 rounded-lg border border-slate-200 bg-white p-4 xl:col-span-2">
      <h2 id="top-threads-title" className="text-base font-semibold text-slate-900">
        Top threads by time lost
      </h2>
      <p className="mb-3 text-sm text-slate-600">Where waiting cost the most in this range.</p>
      {rows.length === 0 ? (
        <p data-testid="top-threads-empty" className="rounded-md bg-slate-50 p-6 text-center text-sm text-slate-600">
          No thread waited in this range.
        </p>
      ) : (
        <div className="overflow-x-auto">
          <table data-testid="top-threads-table" className="w-full border-collapse">
            <caption className="sr-only">Threads by time lost waiting, most first</caption>
            <thead>
              <tr>
                <th scope="col" className={th}>Thread</th>
                <th scope="col" className={th}>Source</th>
                <th scope="col" className={th}>Agent</th>
                <th scope="col" className={th}>Provider · model</th>
                <th scope="col" className={th}>Status</th>
                <th scope="col" className={thNum}>Retries</th>
                <th scope="col" className={thNum}>Time lost</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={`${row.sourceId}\0${row.threadId}`} data-thread-id={row.threadId}>
                  <th scope="row" className={`${thRow} max-w-[28rem] truncate`}>
                    <Link href={threadHref({ id: row.threadId, sourceId: row.sourceId })} className="text-sky-800 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-sky-600" title={row.title ?? row.threadId}>
                      {row.title || row.threadId}
                    </Link>
                    {row.title && <span className="ml-2 font-mono text-xs text-slate-500">{row.threadId}</span>}
                  </th>
                  <td className={td}>{row.source}</td>
                  <td className={td}>{row.agent}</td>
                  <td className={td}>
                    {row.provider} · {row.model}
                  </td>
                  <td className={td}>
                    <StatusBadge status={row.status} />
                  </td>
                  <td className={tdNum}>{row.attempts}</td>
                  <td className={tdNum} data-ms={row.timeLostMs}>
                    {humanDuration(row.timeLostMs)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
