"use client";

import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { THREAD_STATUSES } from "@/lib/retry/types";
import { TROUBLE_KINDS } from "@/lib/threads/filter";
import { kindLabel, statusLabel } from "@/lib/ui/format";
import { FilterSelect, type FilterOption } from "@/components/filters/filter-select";

export interface FilterOptions {
  providers: string[];
  models: string[];
  sources: { id: string; name: string }[];
}

/**
 * Filters live in the URL so every view is a permalink. A plain GET form: works with the
 * keyboard, and with Enter in the search box.
 */
export function BoardFilters({ options }: { options: FilterOptions }) {
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();

  const submit = (form: HTMLFormElement) => {
    const data = new FormData(form);
    const next = new URLSearchParams();
    for (const [key, value] of data) if (typeof value === "string" && value.trim()) next.set(key, value.trim());
    const text = next.toString();
    router.replace(text ? `${pathname}?${text}` : pathname, { scroll: false });
  };

  const select = (name: string, label: string, options: FilterOption[]) => (
    <FilterSelect name={name} label={label} current={params.get(name) ?? ""} options={options} onApply={submit} />
  );

  return (
    <form
      key={params.toString()}
      role="search"
      aria-label="Filter threads"
      onSubmit={(event) => {
        event.preventDefault();
        submit(event.currentTarget);
      }}
      className="flex flex-wrap items-end gap-3 rounded-lg border border-slate-200 bg-white p-3"
    >
      {select("status", "Status", THREAD_STATUSES.map((s) => ({ value: s, label: statusLabel(s) })))}
      {select("kind", "Kind", TROUBLE_KINDS.map((k) => ({ value: k, label: kindLabel(k) })))}
      {select("provider", "Provider", options.providers.map((p) => ({ value: p, label: p })))}
      {select("model", "Model", options.models.map((m) => ({ value: m, label: m })))}
      {select("source", "Source", options.sources.map((s) => ({ value: s.id, label: s.name })))}
      <label className="flex min-w-[16rem] flex-1 flex-col gap-1 text-xs font-medium text-slate-600">
        Search
        <input
          type="search"
          name="q"
          defaultValue={params.get("q") ?? ""}
          placeholder="thread id, title, error text…"
          data-testid="filter-q"
          className="rounded-md border border-slate-300 px-2 py-1.5 text-sm text-slate-900 focus-visible:outline-2 focus-visible:outline-sky-600"
        />
      </label>
      <button type="submit" className="rounded-md bg-slate-800 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-900 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-sky-600">
        Apply
      </button>
      {params.toString() && (
        <button type="button" onClick={() => router.replace(pathname, { scroll: false })} className="rounded-md px-3 py-1.5 text-sm text-slate-700 ring-1 ring-slate-300 hover:bg-slate-100">
          Clear
        </button>
      )}
    </form>
  );
}
