"use client";

import { archiveThread } from "@/lib/actions/archive-thread";
import { resumeThread } from "@/lib/actions/resume-thread";
import { retryThreadNow } from "@/lib/actions/retry-thread-now";
import { snoozeThread } from "@/lib/actions/snooze-thread";
import { canResumeNow, canRetryNow } from "@/lib/threads/control";
import type { ThreadView } from "@/lib/wire/types";
import { ThreadCommand } from "./thread-command";

const SNOOZE_MS = 60 * 60_000;

/**
 * Resume now, Retry now, Archive and Snooze for one thread: each shown only where it applies and
 * the thread's source can carry it out (lib/threads/control.ts).
 */
export function ThreadControls({ thread }: { thread: Pick<ThreadView, "key" | "id" | "status" | "control" | "resumeAt" | "archivedAt" | "snoozedUntil"> }) {
  const { key, id } = thread;
  return (
    <div className="flex flex-wrap items-start gap-2" data-testid="thread-controls">
      {canResumeNow(thread.status, thread.control, thread.resumeAt) && (
        <ThreadCommand label="Resume now" busyLabel="Resuming…" testId="resume-now" ariaLabel={`Resume thread ${id} now`} done={["sent"]} tone="primary" run={() => resumeThread({ key })} />
      )}
      {canRetryNow(thread.status, thread.control) && (
        <ThreadCommand label="Retry now" busyLabel="Retrying…" testId="retry-now" ariaLabel={`Retry thread ${id} now`} done={["sent"]} run={() => retryThreadNow({ key })} />
      )}
      {thread.archivedAt ? (
        <ThreadCommand label="Unarchive" busyLabel="Unarchiving…" testId="unarchive" ariaLabel={`Unarchive thread ${id}`} done={["unarchived"]} run={() => archiveThread({ key, archive: false })} />
      ) : (
        <ThreadCommand label="Archive" busyLabel="Archiving…" testId="archive" ariaLabel={`Archive thread ${id}`} done={["archived"]} run={() => archiveThread({ key, archive: true })} />
      )}
      {thread.snoozedUntil ? (
        <ThreadCommand label="Unsnooze" busyLabel="Waking…" testId="unsnooze" ariaLabel={`Unsnooze thread ${id}`} done={["unsnoozed"]} run={() => snoozeThread({ key, until: null })} />
      ) : (
        <ThreadCommand
          label="Snooze 1 h"
          busyLabel="Snoozing…"
          testId="snooze"
          ariaLabel={`Snooze thread ${id} for an hour`}
          done={["snoozed"]}
          run={() => snoozeThread({ key, until: new Date(Date.now() + SNOOZE_MS).toISOString() })}
        />
      )}
    </div>
  );
}
