"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect } from "react";
import { threadQuery } from "@/lib/client/queries";
import type { ThreadDetail, ThreadDetailResponse } from "@/lib/wire/types";
import { EXPORT_FORMATS } from "@/lib/insights/stream";
import { BY_OPENTELEMETRY } from "@/lib/threads/control";
import { isStoppable } from "@/lib/threads/statuses";
import { attemptLabel, episodeAttemptsText, humanDuration, kindLabel } from "@/lib/ui/format";
import { usePollInterval } from "@/components/live/live-updates";
import { LiveIndicator } from "@/components/live/live-indicator";
import { Countdown, ResetTime } from "@/components/time/countdown";
import { useServerClock } from "@/components/time/server-clock";
import { Timestamp } from "@/components/time/timestamp";
import { CopyPermalink } from "./copy-permalink";
import { threadHref } from "./links";
import { RecoveryNotice } from "./recovery-notice";
import { StatusBadge } from "./status-badge";
import { StopButton } from "./stop-button";
import { ThreadControls } from "./thread-controls";
import { Timeline } from "./timeline";
import { styles } from "@/components/ui/controls";

type Detail = ThreadDetailResponse;

export function ThreadPage({ threadKey, initial }: { threadKey: number; initial: ThreadDetail }) {
  const { observe } = useServerClock();
  const refetchInterval = usePollInterval();
  const query = useQuery({ ...threadQuery(threadKey), initialData: initial as Detail, refetchInterval });
  const detail = query.data;
  useEffect(() => {
    if (detail.serverTime) observe(detail.serverTime);
  }, [detail.serverTime, observe]);
  const { thread } = detail;
  const retrying = thread.status === "retrying" || thread.status === "stalled";
  const recovery = detail.state.recovery;
  const exportBase = `/api/v1/threads/${encodeURIComponent(thread.id)}/export?source=${encodeURIComponent(thread.sourceId)}`;

  return (
    <article className="space-y-6" data-testid="thread-page" data-thread-id={thread.id}>
      <header className="space-y-3 rounded-lg border border-slate-200 bg-white p-5 shadow-sm">
        <div className="flex flex-wrap items-center gap-3">
          <Link href="/" className="text-sm text-sky-800 underline">← Board</Link>
          <LiveIndicator lastUpdated={query.dataUpdatedAt || null} />
          <div className="ml-auto flex flex-wrap items-center gap-2 text-sm">
            <CopyPermalink path={threadHref(thread)} />
            <span className="text-slate-500">Export:</span>
            {EXPORT_FORMATS.map((format) => (
              <a key={format} href={`${exportBase}&format=${format}`} className={styles.chipButton} data-testid={`export-${format}`}>
                {format.toUpperCase()}
              </a>
            ))}
          </div>
        </div>
        <div className="flex flex-wrap items-start gap-4">
          <div className="min-w-0">
            <h1 className="break-words text-2xl font-semibold tracking-tight">{thread.title || thread.id}</h1>
            <p className="font-mono text-xs text-slate-500">{thread.id}</p>
          </div>
          <StatusBadge status={thread.status} />
          {thread.retry && retrying && (
            <span className="text-sm font-medium" data-testid="retry-attempt">
              {attemptLabel(thread.retry.attempt, thread.retry.maxAttempts)}
            </span>
          )}
          {isStoppable(thread.status) &&
            (thread.control.interrupt ? (
              <div className="ml-auto">
                <StopButton threadKey={thread.key} threadId={thread.id} />
              </div>
            ) : (
              // No Stop where nothing can carry it out: say why instead.
              <p className="ml-auto max-w-sm text-sm text-slate-600" data-testid="control-why">
                {thread.control.why}
              </p>
            ))}
        </div>
        <dl className="grid grid-cols-2 gap-x-6 gap-y-2 text-sm md:grid-cols-4 xl:grid-cols-8">
          <Field label="Next attempt">{retrying && thread.retry?.nextAttemptAt ? <Countdown to={thread.retry.nextAttemptAt} estimated={thread.retry.nextAttemptEstimated} /> : "—"}</Field>
          <Field label="Deadline">{retrying && thread.retry?.deadlineAt ? <Timestamp iso={thread.retry.deadlineAt} withDate={false} /> : "—"}</Field>
          <Field label="Reset">
            <ResetTime at={thread.resetAt} />
            {detail.limits.map((w) => (
              <Link key={w.key} href={`/limits#limit-${w.key}`} className="block text-xs text-sky-800 underline-offset-2 hover:underline" data-testid="thread-limit-link">
                {w.provider} {w.window} window{w.usedPercent === null ? "" : ` at ${w.usedPercent} %`}
              </Link>
            ))}
          </Field>
          <Field label="Kind">{kindLabel(thread.retry?.kind ?? thread.lastError?.kind)}</Field>
          <Field label="Policy">{thread.retry?.policy ?? detail.episodes.at(-1)?.policy ?? "—"}</Field>
          <Field label="Agent">{thread.agent ?? "—"}</Field>
          <Field label="Provider · model">{`${thread.provider ?? "—"} · ${thread.model ?? "—"}`}</Field>
          <Field label="Source">{thread.source}</Field>
        </dl>
        {thread.lastError?.message && (
          <p className="rounded bg-red-50 p-3 text-sm text-red-900" data-testid="thread-last-error">
            <span className="mr-1 text-xs font-semibold uppercase tracking-wide">Last error</span>
            <span className="font-mono font-semibold">{[thread.lastError.httpStatus, thread.lastError.code].filter(Boolean).join(" ")}</span> {thread.lastError.message}
          </p>
        )}
        {recovery && <RecoveryNotice recovery={recovery} threadKey={thread.key} threadId={thread.id} />}
        <Paths detail={detail} />
        <ThreadControls thread={thread} />
        {(thread.archivedAt || thread.snoozedUntil) && (
          <p className="text-sm text-slate-600" data-testid="thread-hidden">
            {thread.archivedAt ? "Archived: hidden from the board." : <>Snoozed until <Timestamp iso={thread.snoozedUntil} withDate={false} />: hidden from the board.</>}
          </p>
        )}
      </header>

      <Lineage detail={detail} />
      <Episodes detail={detail} />
      <Directives detail={detail} />
      <Timeline key={thread.key} detail={detail} />
    </article>
  );
}

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <dt className="text-xs uppercase tracking-wide text-slate-500">{label}</dt>
      <dd className="text-slate-900">{children}</dd>
    </div>
  );
}

/**
 * Which paths report this agent thread: a relay's thread names the OpenTelemetry threads joined
 * to it (their events are in its timeline); a joined one points to the relay's; one reported by
 * OpenTelemetry alone says it cannot be controlled, stoppable or not.
 */
function Paths({ detail }: { detail: Detail }) {
  const { thread, joinedTo } = detail;
  if (joinedTo) {
    return (
      <p className="text-sm text-slate-600" data-testid="thread-paths">
        Reported by OpenTelemetry and shown with the relay&apos;s thread:{" "}
        <Link className="text-sky-800 underline" href={threadHref(joinedTo)}>{joinedTo.source}</Link>
      </p>
    );
  }
  if (thread.alsoReportedBy.length) {
    return (
      <p className="text-sm text-slate-600" data-testid="thread-paths">
        Also reported by OpenTelemetry (
        {thread.alsoReportedBy.map((other, i) => (
          <span key={other.key}>
            {i > 0 && ", "}
            <Link className="text-sky-800 underline" href={threadHref({ id: thread.id, sourceId: other.sourceId })}>{other.source}</Link>
          </span>
        ))}
        ): its events are in this timeline and counted once, here.
      </p>
    );
  }
  // A stoppable thread says why it has no Stop beside the status already.
  if (thread.control.why === BY_OPENTELEMETRY && !isStoppable(thread.status)) {
    return <p className="text-sm text-slate-600" data-testid="thread-paths">{BY_OPENTELEMETRY}</p>;
  }
  return null;
}

function Section({ title, children, testId }: { title: string; children: React.ReactNode; testId: string }) {
  return (
    <section aria-labelledby={`${testId}-title`} data-testid={testId} className="space-y-2">
      <h2 id={`${testId}-title`} className="text-lg font-semibold">{title}</h2>
      <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">{children}</div>
    </section>
  );
}

const { th, td } = styles;

function Lineage({ detail }: { detail: Detail }) {
  const rows = [...(detail.parent ? [{ relation: "parent", thread: detail.parent }] : []), ...detail.children.map((thread) => ({ relation: "subagent", thread }))];
  if (rows.length === 0) return null;
  return (
    <Section title="Lineage" testId="lineage">
      <table className="min-w-full text-sm">
        <thead className="bg-slate-100"><tr><th className={th}>Relation</th><th className={th}>Thread</th><th className={th}>Status</th><th className={th}>Updated</th></tr></thead>
        <tbody className="divide-y divide-slate-100">
          {rows.map(({ relation, thread }) => (
            <tr key={thread.key}>
              <td className={td}>{relation}</td>
              <td className={td}><Link className="text-sky-800 underline" href={threadHref(thread)}>{thread.title || thread.id}</Link></td>
              <td className={td}><StatusBadge status={thread.status} /></td>
              <td className={td}><Timestamp iso={thread.updatedAt} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

function Episodes({ detail }: { detail: Detail }) {
  if (detail.episodes.length === 0) return null;
  return (
    <Section title="Retry episodes" testId="episodes">
      <table className="min-w-full text-sm">
        <thead className="bg-slate-100">
          <tr>
            <th className={th}>#</th><th className={th}>Kind</th><th className={th}>Policy</th><th className={th}>Started</th><th className={th}>Ended</th>
            <th className={th}>Outcome</th><th className={th}>Attempts: advised vs actual gap</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {detail.episodes.map((episode) => (
            <tr key={episode.seq} data-testid="episode-row" data-outcome={episode.outcome ?? "open"}>
              <td className={td}>{episode.seq}</td>
              <td className={td}>{kindLabel(episode.kind)}</td>
              <td className={`${td} font-mono text-xs`}>{episode.policy}</td>
              <td className={td}><Timestamp iso={episode.startedAt} /></td>
              <td className={td}><Timestamp iso={episode.endedAt} /></td>
              <td className={td}>
                <span className="font-medium">{episode.outcome ?? "in progress"}</span>
                {episode.outcomeCode && <span className="ml-1 font-mono text-xs text-slate-600">{episode.outcomeCode}</span>}
                <p data-testid="episode-attempts" className="text-xs text-slate-700">{episodeAttemptsText(episode)}</p>
                {episode.outcomeReason && <p className="text-xs text-slate-600">{episode.outcomeReason}</p>}
                {episode.resetAt && <p className="text-xs"><ResetTime at={episode.resetAt} /></p>}
              </td>
              <td className={td}>
                <ol className="space-y-0.5">
                  {episode.attempts.map((attempt) => (
                    <li key={attempt.n} data-testid="attempt" className="whitespace-nowrap text-xs">
                      <span className="font-semibold">{attemptLabel(attempt.n, episode.maxAttempts).replace("Retrying ", "")}</span>{" "}
                      advised {attempt.advisedDelayMs == null ? "none" : humanDuration(attempt.advisedDelayMs)}
                      {" · "}actual {attempt.actualGapMs == null ? "not seen" : humanDuration(attempt.actualGapMs)}
                      {attempt.earlyByMs != null && attempt.earlyByMs > 0 && (
                        <span data-testid="early-retry" className="ml-2 rounded bg-orange-100 px-1.5 py-0.5 font-semibold text-orange-900">
                          retried {humanDuration(attempt.earlyByMs)} early
                        </span>
                      )}
                    </li>
                  ))}
                </ol>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

function Directives({ detail }: { detail: Detail }) {
  if (detail.directives.length === 0) return null;
  return (
    <Section title="Directives" testId="directives">
      <table className="min-w-full text-sm">
        <thead className="bg-slate-100">
          <tr><th className={th}>Kind</th><th className={th}>Origin</th><th className={th}>Reason</th><th className={th}>State</th><th className={th}>Created</th><th className={th}>Delivered</th><th className={th}>Answered</th></tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {detail.directives.map((directive) => (
            <tr key={directive.id} data-testid="directive-row" data-state={directive.state}>
              <td className={td}>{directive.kind}</td>
              <td className={td}>{directive.origin}</td>
              <td className={td}>{directive.reason}</td>
              <td className={td}>{directive.state}{directive.detail && <p className="text-xs text-slate-600">{directive.detail}</p>}</td>
              <td className={td}><Timestamp iso={directive.createdAt} withDate={false} /></td>
              <td className={td}><Timestamp iso={directive.deliveredAt} withDate={false} /></td>
              <td className={td}><Timestamp iso={directive.acknowledgedAt} withDate={false} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}
