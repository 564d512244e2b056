"use client";

import { usePathname, useRouter, useSearchParams } from "next/navigation";
import type { FilterOptions } from "@/lib/wire/types";
import { FILTER_FIELDS, FilterForm, type FilterValues } from "@/components/filters/filter-form";
import { styles } from "@/components/ui/controls";

/** Filters live in the URL so every view is a permalink. */
export function BoardFilters({ options }: { options: FilterOptions }) {
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const current: FilterValues = Object.fromEntries(FILTER_FIELDS.map((name) => [name, params.get(name) ?? ""]));
  const go = (values: FilterValues) => {
    const text = new URLSearchParams(values as Record<string, string>).toString();
    router.replace(text ? `${pathname}?${text}` : pathname, { scroll: false });
  };
  return (
    <FilterForm
      label="Filter threads"
      current={current}
      options={options}
      onApply={go}
      className="flex flex-wrap items-end gap-3 rounded-lg border border-slate-200 bg-white p-3"
    >
      {params.toString() && (
        <button type="button" onClick={() => go({})} className={styles.secondaryButton}>
          Clear
        </button>
      )}
    </FilterForm>
  );
}
