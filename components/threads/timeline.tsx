"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { AttemptView, EventView, ThreadDetail } from "@/lib/wire/types";
import { earlierEventsQuery, eventRawQuery } from "@/lib/client/queries";
import { styles } from "@/components/ui/controls";
import { humanDuration, kindLabel } from "@/lib/ui/format";
import { Timestamp } from "@/components/time/timestamp";

type Detail = Pick<ThreadDetail, "events" | "earlierEvents" | "episodes" | "thread">;

/** Events loaded with "load earlier", plus every event shown since (the newest page moves on as the thread goes on). */
interface History {
  events: Map<number, EventView>;
  earlier: number | null;
}

function withEvents(events: Map<number, EventView>, more: EventView[]): Map<number, EventView> {
  const next = new Map(events);
  for (const event of more) next.set(event.seq, event);
  return next;
}

/** Reducer order: event time, then sequence. */
const byReducerOrder = (a: EventView, b: EventView) => Date.parse(a.at) - Date.parse(b.at) || a.seq - b.seq;

/**
 * The thread's events in reducer order, with the retry gap next to its advice: the newest page
 * live, earlier pages on demand ("load earlier"), each raw payload fetched when opened.
 */
export function Timeline({ detail }: { detail: Detail }) {
  const queryClient = useQueryClient();
  const threadKey = detail.thread.key;
  const [history, setHistory] = useState<History | null>(null);
  const [loading, setLoading] = useState(false);
  const [loadError, setLoadError] = useState<string | null>(null);
  useEffect(() => {
    setHistory((current) => current && { ...current, events: withEvents(current.events, detail.events) });
  }, [detail.events]);
  const events = history ? [...withEvents(history.events, detail.events).values()].sort(byReducerOrder) : detail.events;
  const earlier = history ? history.earlier : detail.earlierEvents;

  const loadEarlier = async () => {
    if (earlier == null) return;
    setLoading(true);
    setLoadError(null);
    try {
      const page = await queryClient.fetchQuery(earlierEventsQuery(threadKey, earlier));
      setHistory((current) => ({ events: withEvents(withEvents(current?.events ?? new Map(), detail.events), page.events), earlier: page.earlier }));
    } catch (error) {
      setLoadError((error as Error).message);
    } finally {
      setLoading(false);
    }
  };

  const attemptsByNotice = new Map<string, AttemptView>();
  for (const episode of detail.episodes) for (const attempt of episode.attempts) attemptsByNotice.set(`${episode.turnId}:${attempt.n}`, attempt);
  return (
    <section aria-labelledby="timeline-title" data-testid="timeline" className="space-y-2">
      <h2 id="timeline-title" className="text-lg font-semibold">
        Timeline ({earlier == null ? `${events.length} events` : `the latest ${events.length} events`})
      </h2>
      {earlier != null && (
        <div className="flex items-center gap-3 text-sm">
          <button type="button" className={styles.chipButton} data-testid="load-earlier" disabled={loading} onClick={() => void loadEarlier()}>
            {loading ? "Loading earlier events…" : "Load earlier events"}
          </button>
          {loadError && <span role="alert" className="text-red-800">{loadError}</span>}
        </div>
      )}
      <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
        <table className="min-w-full text-sm">
          <thead className={styles.thead}>
            <tr>
              <th scope="col" className={styles.th}>Time</th>
              <th scope="col" className={styles.th}>Event</th>
              <th scope="col" className={styles.th}>Attempt</th>
              <th scope="col" className={styles.th}>Kind</th>
              <th scope="col" className={styles.th}>Advised · actual gap</th>
              <th scope="col" className={styles.th}>Detail</th>
              <th scope="col" className={styles.th}>Raw</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {events.map((event) => {
              const attempt = event.attempt != null ? attemptsByNotice.get(`${event.turnId}:${event.attempt}`) : undefined;
              return (
                <tr key={event.seq} data-testid="timeline-event" data-type={event.type} data-late={event.late || undefined} className={event.late ? "bg-slate-50 text-slate-500" : ""}>
                  <td className={`${styles.td} whitespace-nowrap`}>
                    <Timestamp iso={event.at} />
                    {event.count > 1 && <div className="text-xs text-slate-500">{event.count} updates until <Timestamp iso={event.lastAt} withDate={false} /></div>}
                  </td>
                  <td className={styles.td}>
                    <span className="font-medium">{event.type}</span>
                    {event.nativeType && event.nativeType !== event.type && <div className="font-mono text-xs text-slate-500">{event.nativeType}</div>}
                    {event.late && <span data-testid="late-frame" className="ml-1 rounded bg-slate-200 px-1.5 py-0.5 text-xs font-semibold text-slate-700">late — after the episode ended</span>}
                    {event.clampedFrom && (
                      <div data-testid="clock-ahead" className="mt-1 text-xs text-amber-800">
                        source clock ahead: sent as <Timestamp iso={event.clampedFrom} />, shown at its receive time
                      </div>
                    )}
                  </td>
                  <td className={`${styles.td} whitespace-nowrap`}>{event.attempt != null ? `${event.attempt}${event.maxAttempts ? `/${event.maxAttempts}` : ""}` : ""}</td>
                  <td className={`${styles.td} whitespace-nowrap`}>{event.kind ? kindLabel(event.kind) : ""}</td>
                  <td className={`${styles.td} whitespace-nowrap text-xs`}>
                    {event.type === "retry" && attempt?.advisedDelayMs != null && <>advised {humanDuration(attempt.advisedDelayMs)}</>}
                    {event.type === "attempt" && attempt?.actualGapMs != null && (
                      <>
                        actual {humanDuration(attempt.actualGapMs)}
                        {attempt.earlyByMs != null && attempt.earlyByMs > 0 && (
                          <span data-testid="early-retry" className="ml-2 rounded bg-orange-100 px-1.5 py-0.5 font-semibold text-orange-900">
                            retried {humanDuration(attempt.earlyByMs)} early
                          </span>
                        )}
                      </>
                    )}
                  </td>
                  <td className={`${styles.td} max-w-[28rem] text-xs`}>
                    {(event.httpStatus || event.code) && <span className="mr-1 font-mono font-semibold">{[event.httpStatus, event.code].filter(Boolean).join(" ")}</span>}
                    <span className="break-words">{event.message}</span>
                  </td>
                  <td className={styles.td}>
                    <RawPayload threadKey={threadKey} seq={event.seq} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** The payload as the source sent it (credentials masked), fetched the first time it is opened. */
function RawPayload({ threadKey, seq }: { threadKey: number; seq: number }) {
  const [open, setOpen] = useState(false);
  const raw = useQuery({ ...eventRawQuery(threadKey, seq), enabled: open });
  return (
    <details onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary className="cursor-pointer text-xs text-sky-800 underline">payload</summary>
      {open && (
        <pre data-testid="raw-payload" className="mt-1 max-h-80 max-w-[36rem] overflow-auto rounded bg-slate-900 p-2 text-xs text-slate-100">
          {raw.data ? JSON.stringify(raw.data.raw, null, 2) : raw.error ? `Could not load the payload: ${raw.error.message}` : "Loading…"}
        </pre>
      )}
    </details>
  );
}
