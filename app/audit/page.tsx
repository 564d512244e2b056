import { pageAccess } from "@/lib/server/page-access";
import type { Metadata } from "next";
import Link from "next/link";
import { z } from "zod";
import { auditFilter, auditQuery, auditQueryString } from "@/lib/audit/query";
import { listAudit } from "@/lib/db/audit";
import { RANGE_PRESETS } from "@/lib/insights/range";
import { EXPORT_FORMATS } from "@/lib/insights/stream";
import { Timestamp } from "@/components/time/timestamp";
import { Field, styles } from "@/components/ui/controls";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Audit" };

const query = auditQuery.extend({ page: z.coerce.number().int().min(1).optional() });

/** Every operator action — who, when, what, why, result — newest first, filterable in the URL and exported with the same filter. */
export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await pageAccess("viewer", "/audit");
  const raw = Object.fromEntries(Object.entries(await searchParams).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]).filter(([, v]) => v));
  const parsed = query.safeParse(raw);
  const { page, ...filter } = parsed.success ? parsed.data : {};
  const audit = await listAudit({ ...auditFilter(filter, Date.now()), page });
  const pages = Math.max(1, Math.ceil(audit.total / audit.pageSize));
  const pageHref = (page: number) => `/audit${auditQueryString(filter, { page: String(page) })}`;
  const filtered = Object.values(filter).some((value) => value !== undefined);
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-baseline gap-4">
        <h1 className="text-2xl font-semibold tracking-tight">Audit</h1>
        <p className="ml-auto flex gap-2 text-sm" data-testid="audit-export">
          <span className="text-slate-600">Export{filtered ? " this filter" : ""}:</span>
          {EXPORT_FORMATS.map((format) => (
            <a key={format} href={`/api/v1/exports/audit${auditQueryString(filter, { format })}`} download className={styles.chipButton}>
              {format.toUpperCase()}
            </a>
          ))}
        </p>
      </div>
      {!parsed.success && <p role="alert" className="text-red-800">Ignoring a bad filter: {parsed.error.issues[0].message}</p>}
      <form role="search" aria-label="Filter audit entries" className="flex flex-wrap items-end gap-3 rounded-lg border border-slate-200 bg-white p-3">
        <Field label="Action">
          <select name="action" defaultValue={filter.action ?? ""} className={styles.control}>
            <option value="">any</option>
            {audit.actions.map((action) => <option key={action} value={action}>{action}</option>)}
          </select>
        </Field>
        <Field label="Actor">
          <input name="actor" defaultValue={filter.actor ?? ""} className={styles.control} />
        </Field>
        <Field label="Search target, reason, detail" className="min-w-[16rem] flex-1">
          <input type="search" name="q" defaultValue={filter.q ?? ""} className={styles.control} />
        </Field>
        <Field label="When">
          <select name="range" defaultValue={filter.range ?? ""} className={styles.control}>
            <option value="">any time</option>
            {Object.keys(RANGE_PRESETS).map((range) => <option key={range} value={range}>last {range}</option>)}
          </select>
        </Field>
        {/* An absolute range (an incident's permalink) is kept while the other fields change. */}
        {filter.from !== undefined && <input type="hidden" name="from" value={new Date(filter.from).toISOString()} />}
        {filter.to !== undefined && <input type="hidden" name="to" value={new Date(filter.to).toISOString()} />}
        <button type="submit" className={styles.primaryButton}>Apply</button>
      </form>
      {audit.entries.length === 0 ? (
        <p data-testid="audit-empty" className="rounded-lg border border-dashed border-slate-300 bg-white p-6 text-slate-700">
          No operator actions recorded{filtered ? " for this filter" : " yet"}.
        </p>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
          <table className="min-w-full text-sm" data-testid="audit-table">
            <thead className={styles.thead}>
              <tr>
                <th scope="col" className="px-3 py-2 text-left">When</th>
                <th scope="col" className="px-3 py-2 text-left">Who</th>
                <th scope="col" className="px-3 py-2 text-left">What</th>
                <th scope="col" className="px-3 py-2 text-left">Target</th>
                <th scope="col" className="px-3 py-2 text-left">Why</th>
                <th scope="col" className="px-3 py-2 text-left">Result</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {audit.entries.map((entry) => (
                <tr key={entry.id} data-testid="audit-row" data-action={entry.action}>
                  <td className="whitespace-nowrap px-3 py-2"><Timestamp iso={entry.at} /></td>
                  <td className="px-3 py-2">{entry.actor}</td>
                  <td className="px-3 py-2 font-medium">{entry.action}</td>
                  <td className="px-3 py-2 font-mono text-xs">{entry.target ?? "—"}</td>
                  <td className="px-3 py-2">{entry.reason ?? "—"}</td>
                  <td className="px-3 py-2">
                    {entry.result}
                    {entry.detail && <p className="text-xs text-slate-600">{entry.detail}</p>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {pages > 1 && (
        <nav aria-label="Pages" className="flex gap-3 text-sm">
          {audit.page > 1 && <Link href={pageHref(audit.page - 1)} className="underline">Newer</Link>}
          <span>Page {audit.page} of {pages}</span>
          {audit.page < pages && <Link href={pageHref(audit.page + 1)} className="underline">Older</Link>}
        </nav>
      )}
    </div>
  );
}
