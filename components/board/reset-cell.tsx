"use client";

import Link from "next/link";
import { ResetTime, ResumesAt } from "@/components/time/countdown";
import type { ThreadView } from "@/lib/wire/types";

/**
 * The board's Reset column: when the thread's usage window resets (linked to the window's row on
 * /limits when it waits on one), and when a scheduled continuation resumes it.
 */
export function ResetCell({ thread }: { thread: Pick<ThreadView, "resetAt" | "limitKey" | "resumeAt"> }) {
  return (
    <>
      {thread.limitKey ? (
        <Link href={`/limits#limit-${thread.limitKey}`} className="text-sky-800 underline-offset-2 hover:underline" data-testid="reset-limit-link">
          <ResetTime at={thread.resetAt} />
        </Link>
      ) : (
        <ResetTime at={thread.resetAt} />
      )}
      {thread.resumeAt && (
        <div className="text-indigo-900">
          <ResumesAt at={thread.resumeAt} />
        </div>
      )}
    </>
  );
}
