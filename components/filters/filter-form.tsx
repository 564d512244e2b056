"use client";

import type { ReactNode } from "react";
import { THREAD_STATUSES } from "@/lib/retry/types";
import { TROUBLE_KINDS } from "@/lib/threads/filter";
import { kindLabel, statusLabel } from "@/lib/ui/format";
import type { FilterOptions } from "@/lib/wire/types";
import { Field, styles } from "@/components/ui/controls";
import { FilterSelect, type FilterOption } from "./filter-select";

/** The thread filter's fields, as the board, the threads API and insights name them in the URL. */
export const FILTER_FIELDS = ["status", "kind", "provider", "model", "source", "q"] as const;
export type FilterField = (typeof FILTER_FIELDS)[number];
export type FilterValues = Partial<Record<FilterField, string>>;

/**
 * The thread filter form of the board and of insights. A plain form: works with the keyboard
 * and with Enter in the search box; a select applies as soon as it changes. Values are the
 * URL's (comma-separated lists); `onApply` gets the trimmed non-empty ones.
 */
export function FilterForm({
  label,
  current,
  options,
  onApply,
  statusLabel: statusTitle = "Status",
  statusLast = false,
  searchLabel = "Search",
  className,
  children,
}: {
  label: string;
  current: FilterValues;
  options: FilterOptions;
  onApply: (values: FilterValues) => void;
  statusLabel?: string;
  /** Insights lead with what went wrong (kind), the board with where threads stand. */
  statusLast?: boolean;
  searchLabel?: string;
  className: string;
  /** Further controls after Apply (the board's Clear). */
  children?: ReactNode;
}) {
  const apply = (form: HTMLFormElement) => {
    const values: FilterValues = {};
    for (const [key, value] of new FormData(form)) {
      if (typeof value === "string" && value.trim() && FILTER_FIELDS.includes(key as FilterField)) values[key as FilterField] = value.trim();
    }
    onApply(values);
  };
  const select = (name: FilterField, title: string, choices: FilterOption[]) => (
    <FilterSelect name={name} label={title} current={current[name] ?? ""} options={choices} onApply={apply} />
  );
  const status = select("status", statusTitle, THREAD_STATUSES.map((s) => ({ value: s, label: statusLabel(s) })));
  return (
    <form
      key={JSON.stringify(current)}
      role="search"
      aria-label={label}
      onSubmit={(event) => {
        event.preventDefault();
        apply(event.currentTarget);
      }}
      className={className}
    >
      {!statusLast && status}
      {select("kind", "Kind", TROUBLE_KINDS.map((k) => ({ value: k, label: kindLabel(k) })))}
      {select("provider", "Provider", options.providers.map((p) => ({ value: p, label: p })))}
      {select("model", "Model", options.models.map((m) => ({ value: m, label: m })))}
      {select("source", "Source", options.sources.map((s) => ({ value: s.id, label: s.name })))}
      {statusLast && status}
      <Field label={searchLabel} className="min-w-[14rem] flex-1">
        <input type="search" name="q" defaultValue={current.q ?? ""} placeholder="thread id, title, error text…" data-testid="filter-q" className={styles.control} />
      </Field>
      <button type="submit" className={styles.primaryButton}>
        Apply
      </button>
      {children}
    </form>
  );
}
