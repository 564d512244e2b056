"use client";

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
    <label className="flex flex-col gap-1 text-xs font-medium text-slate-600">
      {label}
      <select
        name={name}
        defaultValue={current}
        data-testid={`filter-${name}`}
        onChange={(event) => onApply(event.currentTarget.form!)}
        className="rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm text-slate-900 focus-visible:outline-2 focus-visible:outline-sky-600"
      >
        <option value="">any</option>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
        {current && !options.some((option) => option.value === current) && <option value={current}>{current}</option>}
      </select>
    </label>
  );
}
