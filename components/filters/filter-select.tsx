"use client";

import { Field, styles } from "@/components/ui/controls";

export interface FilterOption {
  value: string;
  label: string;
}

/**
 * One filter of a URL-backed filter form: "any" or one value, applied as soon as it changes.
 * A value from the URL that is not among the options (several, or one no longer seen) stays
 * selectable, so the control shows what the view is filtered by.
 */
export function FilterSelect({
  name,
  label,
  current,
  options,
  onApply,
}: {
  name: string;
  label: string;
  current: string;
  options: FilterOption[];
  onApply: (form: HTMLFormElement) => void;
}) {
  return (
    <Field label={label}>
      <select
        name={name}
        defaultValue={current}
        data-testid={`filter-${name}`}
        onChange={(event) => onApply(event.currentTarget.form!)}
        className={styles.control}
      >
        <option value="">any</option>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
        {current && !options.some((option) => option.value === current) && <option value={current}>{current}</option>}
      </select>
    </Field>
  );
}
