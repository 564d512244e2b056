import type { ReactNode } from "react";
import { styles } from "./controls";

/**
 * The dashboard's bordered table: column headers, rows, and a line of its own when there are no
 * rows. `columns` are header labels; an empty label is read out as `Actions`.
 */
export function Table({ testId, columns, empty, children }: { testId: string; columns: string[]; empty: ReactNode | null; children: ReactNode }) {
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
      <table className="min-w-full text-sm" data-testid={testId}>
        <thead className={styles.thead}>
          <tr>
            {columns.map((label, i) => (
              <th key={i} scope="col" className={styles.th}>
                {label || <span className="sr-only">Actions</span>}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {empty !== null && (
            <tr>
              <td colSpan={columns.length} className={styles.td + " text-slate-600"}>{empty}</td>
            </tr>
          )}
          {children}
        </tbody>
      </table>
    </div>
  );
}
