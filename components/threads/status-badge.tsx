import type { ThreadStatus } from "@/lib/retry/types";
import { statusLabel } from "@/lib/ui/format";

const TONES: Record<string, string> = {
  running: "bg-sky-100 text-sky-900 ring-sky-300",
  retrying: "bg-amber-100 text-amber-900 ring-amber-300",
  waiting_reset: "bg-violet-100 text-violet-900 ring-violet-300",
  stalled: "bg-orange-200 text-orange-950 ring-orange-400",
  recovered: "bg-emerald-50 text-emerald-900 ring-emerald-300",
  exhausted: "bg-red-100 text-red-900 ring-red-300",
  failed: "bg-red-100 text-red-900 ring-red-300",
  recovery_scheduled: "bg-indigo-100 text-indigo-900 ring-indigo-300",
  stopping: "bg-yellow-100 text-yellow-900 ring-yellow-400",
  stopped: "bg-slate-200 text-slate-800 ring-slate-300",
  broken: "bg-rose-200 text-rose-950 ring-rose-400",
  completed: "bg-emerald-100 text-emerald-900 ring-emerald-300",
  idle: "bg-slate-100 text-slate-700 ring-slate-200",
} satisfies Record<ThreadStatus, string>;

export function StatusBadge({ status }: { status: string }) {
  return (
    <span
      data-testid="thread-status"
      data-status={status}
      className={`inline-block whitespace-nowrap rounded-full px-2.5 py-0.5 text-xs font-semibold ring-1 ${TONES[status] ?? TONES.idle}`}
    >
      {statusLabel(status)}
    </span>
  );
}
