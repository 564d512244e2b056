"use client";

import { stopThread } from "@/lib/actions/stop-thread";
import { ThreadCommand } from "./thread-command";

/** Stop retrying: a server action; the row shows `stopping` at once and updates live after. */
export function StopButton({ threadKey, threadId, disabled }: { threadKey: number; threadId: string; disabled?: boolean }) {
  return (
    <ThreadCommand
      label="Stop retrying"
      busyLabel="Stopping…"
      testId="stop-retrying"
      ariaLabel={`Stop retrying thread ${threadId}`}
      done={["stopping"]}
      nothingDone="Nothing to stop."
      tone="danger"
      disabled={disabled}
      run={() => stopThread({ key: threadKey })}
    />
  );
}
