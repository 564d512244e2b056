"use client";

import Link from "next/link";
import { Fragment, memo, useId, useState } from "react";
import type { ThreadView } from "@/lib/wire/types";
import { useIncidentMarkers } from "@/components/incidents/incident-banners";
import { isStoppable } from "@/lib/threads/statuses";
import { attemptLabel, codeBreaks, kindLabel } from "@/lib/ui/format";
import { Countdown } from "@/components/time/countdown";
import { ResetCell } from "./reset-cell";
import { Timestamp } from "@/components/time/timestamp";
import { StatusBadge } from "@/components/threads/status-badge";
import { StopButton } from "@/components/threads/stop-button";
import { threadHref } from "@/components/threads/links";
import { styles } from "@/components/ui/controls";

export function ThreadsTable({ threads }: { threads: ThreadView[] }) {
  const markers = useIncidentMarkers();
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
      <table className="w-full min-w-[1280px] table-fixed text-left text-sm" data-testid="threads-table">
        <caption className="sr-only">Threads, those needing attention first</caption>
        {/* Fixed widths keep the Stop button on screen at 1440 px; text wraps inside its cell rather
            than running into the next one ("overdue 1:02:03" breaks after "overdue"). */}
        <colgroup>
          <col className="w-[9.5rem]" />
          <col className="w-[9.5rem]" />
          <col className="w-[6.5rem]" />
          <col className="w-[7rem]" />
          <col className="w-[7rem]" />
          <col className="w-[7.5rem]" />
          <col className="w-[7rem]" />
          <col className="w-[8rem]" />
          <col className="w-[5.5rem]" />
          <col />
          <col className="w-[8.5rem]" />
        </colgroup>
        <thead className={styles.thead}>
          <tr>
            <th scope="col" className="px-3 py-2">Status</th>
            <th scope="col" className="px-3 py-2">Thread</th>
            <th scope="col" className="px-3 py-2">Retry</th>
            <th scope="col" className="px-3 py-2">Next attempt</th>
            <th scope="col" className="px-3 py-2">Deadline</th>
            <th scope="col" className="px-3 py-2">Reset</th>
            <th scope="col" className="px-3 py-2">Kind</th>
            <th scope="col" className="px-3 py-2">Agent · provider · model</th>
            <th scope="col" className="px-3 py-2">Source</th>
            <th scope="col" className="px-3 py-2">Last error</th>
            <th scope="col" className="px-3 py-2"><span className="sr-only">Actions</span></th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {threads.map((thread) => {
            const marker = markers.get(thread.key);
            return <ThreadRow key={thread.key} thread={thread} incidentId={marker?.id} incidentLabel={marker?.label} />;
          })}
        </tbody>
      </table>
    </div>
  );
}

/**
 * A row re-renders only when its thread or its incident's marker changed: a row refetch replaces
 * just those, and the incidents, read again up to 3 times a second on a busy fleet, come as new
 * objects every time, so the marker is passed as the strings it shows.
 */
const ThreadRow = memo(function ThreadRow({ thread, incidentId, incidentLabel }: { thread: ThreadView; incidentId?: string; incidentLabel?: string }) {
  const retry = thread.retry;
  const retrying = thread.status === "retrying" || thread.status === "stalled";
  return (
    <tr data-testid="thread-row" data-thread-id={thread.id} data-thread-key={thread.key} data-source-id={thread.sourceId} data-status={thread.status} className="align-top hover:bg-slate-50">
      <td className="px-3 py-2">
        <StatusBadge status={thread.status} />
      </td>
      <td className="break-words px-3 py-2">
        {/* Not prefetched: on a busy fleet every new row would cost the server a render of its thread page. */}
        <Link href={threadHref(thread)} prefetch={false} className="font-medium text-sky-800 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-sky-600">
          {thread.title || thread.id}
        </Link>
        {thread.title && <div className="truncate font-mono text-xs text-slate-500" title={thread.id}>{thread.id}</div>}
        {thread.parentThreadId && <div className="text-xs text-slate-500">subagent of {thread.parentThreadId}</div>}
        {incidentId && (
          <Link href={`/incidents/${incidentId}`} prefetch={false} data-testid="incident-marker" className="mt-0.5 inline-block rounded bg-amber-100 px-1.5 text-xs text-amber-900" title={incidentLabel}>
            ▲ in incident
          </Link>
        )}
      </td>
      <td className="break-words px-3 py-2" data-testid="retry-attempt">
        {retry && retrying ? attemptLabel(retry.attempt, retry.maxAttempts) : retry?.attempt ? <span className="text-slate-500">{attemptLabel(retry.attempt, retry.maxAttempts).replace("Retrying", "after")}</span> : <span className="text-slate-400">—</span>}
      </td>
      <td className="break-words px-3 py-2">
        {retrying && retry?.nextAttemptAt ? <Countdown to={retry.nextAttemptAt} estimated={retry.nextAttemptEstimated} /> : <span className="text-slate-400">—</span>}
      </td>
      <td className="break-words px-3 py-2">
        {retrying && retry?.deadlineAt ? <Timestamp iso={retry.deadlineAt} withDate={false} /> : <span className="text-slate-400">—</span>}
      </td>
      <td className="px-3 py-2 text-xs">
        <ResetCell thread={thread} />
      </td>
      <td className="break-words px-3 py-2" data-testid="thread-kind">
        {kindLabel(retry?.kind ?? thread.lastError?.kind)}
      </td>
      <td className="break-words px-3 py-2 text-slate-700">
        <div>{thread.agent ?? "—"}</div>
        <div className="text-xs text-slate-500">
          {thread.provider ?? "—"} · {thread.model ?? "—"}
        </div>
      </td>
      <td className="break-words px-3 py-2 text-slate-700">
        {thread.source}
        {thread.alsoReportedBy.length > 0 && (
          <div className="text-xs text-slate-500" data-testid="also-reported-by" title={thread.alsoReportedBy.map((other) => other.source).join(", ")}>
            also reported by OpenTelemetry
          </div>
        )}
      </td>
      <td className="break-words px-3 py-2">
        <LastError error={thread.lastError} />
      </td>
      <td className="px-3 py-2">
        {isStoppable(thread.status) && thread.control.interrupt && <StopButton threadKey={thread.key} threadId={thread.id} />}
      </td>
    </tr>
  );
});

/**
 * The last error: its code, and its message clamped to two lines until expanded. A disclosure
 * button, not <details>: Chromium gives every <details> a shadow root with a style sheet of its
 * own, and each one a new row brings makes the whole document's style be worked out again; a
 * busy fleet brings hundreds of rows a second (scripts/trace-summary.ts on the board bench's
 * trace: 1,844 of them in 7 s of load).
 */
function LastError({ error }: { error: ThreadView["lastError"] }) {
  const [open, setOpen] = useState(false);
  const fullText = useId();
  if (!error?.message && !error?.code) return <span className="text-slate-400">—</span>;
  const head = [error.httpStatus, error.code].filter(Boolean).join(" ");
  return (
    <div className="text-xs" data-testid="last-error">
      <button
        type="button"
        aria-expanded={open}
        aria-controls={fullText}
        onClick={() => setOpen((was) => !was)}
        data-testid="last-error-toggle"
        className="block w-full cursor-pointer text-left text-slate-800 focus-visible:outline-2 focus-visible:outline-sky-600"
      >
        {head && (
          <span className="block font-mono font-semibold [overflow-wrap:anywhere]">
            {codeBreaks(head).map((piece, i) => (
              <Fragment key={i}>
                {i > 0 && <wbr />}
                {piece}
              </Fragment>
            ))}
          </span>
        )}
        {open ? <span className="text-sky-800 underline">hide full text</span> : <span className="line-clamp-2">{error.message}</span>}
      </button>
      <p id={fullText} hidden={!open} className="mt-1 whitespace-pre-wrap break-words text-slate-700">
        {error.message}
      </p>
    </div>
  );
}
