import type { ReactNode } from "react";

/** The shared look of form controls, buttons and table cells: change it here, not per page. */
export const styles = {
  /** Text inputs and selects. */
  control:
    "rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm text-slate-900 focus-visible:outline-2 focus-visible:outline-sky-600",
  /** The main action of a form. */
  primaryButton:
    "rounded-md bg-slate-800 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-900 disabled:bg-slate-300 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-sky-600",
  /** A secondary action next to it (Clear, Cancel). */
  secondaryButton:
    "rounded-md px-3 py-1.5 text-sm text-slate-700 ring-1 ring-slate-300 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-sky-600",
  /** Stop retrying and other actions that change what an agent does; the size is the caller's. */
  dangerButton:
    "rounded-md bg-red-700 px-3 py-1.5 font-semibold text-white hover:bg-red-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-red-700 disabled:cursor-not-allowed disabled:bg-slate-300",
  /** Small outlined links and toggles in a page header (permalink, export). */
  chipButton: "rounded px-2 py-1 ring-1 ring-slate-300 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-sky-600",
  /** A small action in a table row (Save, Unlock, Enable). */
  rowButton:
    "rounded-md px-2 py-1 text-xs ring-1 ring-slate-300 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-sky-600 disabled:text-slate-400",
  /** A small action in a table row that takes something away (Revoke, Disable). */
  rowDangerButton:
    "rounded-md px-2 py-1 text-xs text-red-800 ring-1 ring-red-300 hover:bg-red-50 focus-visible:outline-2 focus-visible:outline-red-700 disabled:text-slate-400",
  th: "px-3 py-2 text-left text-xs font-semibold uppercase tracking-wide text-slate-600",
  td: "px-3 py-2 align-top",
  thead: "bg-slate-100 text-xs uppercase tracking-wide text-slate-600",
};

/** A labelled control: the label text above the control, the whole label clickable. */
export function Field({ label, className = "", children }: { label: ReactNode; className?: string; children: ReactNode }) {
  return (
    <label className={`flex flex-col gap-1 text-xs font-medium text-slate-600 ${className}`}>
      {label}
      {children}
    </label>
  );
}
