"use client";

import type { AttemptView, ThreadDetail } from "@/lib/wire/types";
import { styles } from "@/components/ui/controls";
import { humanDuration, kindLabel } from "@/lib/ui/format";
import { Timestamp } from "@/components/time/timestamp";

type Detail = Pick<ThreadDetail, "events" | "episodes">;

/** Every event of the thread in reducer order, with the retry gap next to its advice. */
export function Timeline({ detail }: { detail: Detail }) {
  const attemptsByNotice = new Map<string, AttemptView>();
  for (const episode of detail.episodes) for (const attempt of episode.attempts) attemptsByNotice.set(`${episode.turnId}:${attempt.n}`, attempt);
  return (
    <section aria-labelledby="timeline-title" data-testid="timeline" className="space-y-2">
      <h2 id="timeline-title" className="text-lg font-semibold">Timeline ({detail.events.length} events)</h2>
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
            {detail.events.map((event) => {
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
                    <details>
                      <summary className="cursor-pointer text-xs text-sky-800 underline">payload</summary>
                      <pre data-testid="raw-payload" className="mt-1 max-h-80 max-w-[36rem] overflow-auto rounded bg-slate-900 p-2 text-xs text-slate-100">{JSON.stringify(event.raw, null, 2)}</pre>
                    </details>
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
