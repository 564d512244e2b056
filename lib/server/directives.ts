import { config } from "@/lib/config";
import { takePendingDirectives, type AckOutcome } from "@/lib/db/directives";
import { maskText } from "@/lib/ingest/mask";
import type { DirectiveView } from "@/lib/wire/types";
import { subscribe } from "./bus";
import { withInternalEvents } from "./pipeline";
import { shared } from "@/lib/process-state";

/**
 * Long-polls (wait > 0) one ingest token may hold open at once: a relay holds one; a few more cover
 * a restart whose old poll has not ended yet. Beyond it a poll is refused with 429 and
 * LONG_POLL_RETRY_AFTER_S, so a token cannot tie up the server's connections and listeners.
 */
export const LONG_POLLS_PER_TOKEN = 4;
export const LONG_POLL_RETRY_AFTER_S = 5;

/** Open long-polls by token hash, process-wide (lib/process-state.ts). */
const longPolls = shared("longPolls", (): Map<string, number> => new Map());

/** Takes a long-poll slot for the token (by its hash), or null when it holds LONG_POLLS_PER_TOKEN. */
export function admitLongPoll(tokenHash: string): (() => void) | null {
  const held = longPolls.get(tokenHash) ?? 0;
  if (held >= LONG_POLLS_PER_TOKEN) return null;
  longPolls.set(tokenHash, held + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (longPolls.get(tokenHash) ?? 1) - 1;
    if (left > 0) longPolls.set(tokenHash, left);
    else longPolls.delete(tokenHash);
  };
}

/**
 * Waits up to `waitMs` for directives for a source. Returns at once when some are pending;
 * otherwise wakes on the first "directives pending" publication, the timeout or disconnect.
 * It listens before the first look, so a wake-up published while that look runs is not lost.
 */
export async function waitForDirectives(sourceId: string, waitMs: number, signal?: AbortSignal): Promise<DirectiveView[]> {
  let woken = false;
  let wake: () => void = () => undefined;
  const onWake = () => {
    woken = true;
    wake();
  };
  const offDirectives = subscribe("directives", (message) => {
    if (message.sourceId === sourceId) onWake();
  });
  // Another instance's wake-up may have been missed: look again.
  const offResync = subscribe("resync", onWake);
  let timer: NodeJS.Timeout | undefined;
  try {
    const ready = await takePendingDirectives(sourceId, Date.now(), redeliverAfterMs());
    if (ready.length || waitMs <= 0) return ready;
    if (!woken && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        wake = () => resolve();
        timer = setTimeout(wake, waitMs);
        signal?.addEventListener("abort", wake, { once: true });
      });
    }
    return signal?.aborted ? [] : await takePendingDirectives(sourceId, Date.now(), redeliverAfterMs());
  } finally {
    clearTimeout(timer);
    offDirectives();
    offResync();
    signal?.removeEventListener("abort", wake);
  }
}

/** A delivered directive nobody acknowledged within this long is delivered again. */
function redeliverAfterMs(): number {
  return config().RADAR_REDELIVER_MS;
}

/**
 * Records the acknowledgement and lets the engine move the thread on (stopping → stopped), in
 * one unit of work. A repeated answer changes nothing, unless the thread never received it (an
 * acknowledgement recorded by an older version that failed before applying it): then it heals.
 */
export async function acknowledgeDirective(
  sourceId: string,
  id: string,
  result: "acknowledged" | "failed",
  given: string | null,
  now = Date.now(),
): Promise<Extract<AckOutcome, { ok: false }> | (Extract<AckOutcome, { ok: true }> & { threadStatus: string | null })> {
  // A source's own words, shown to every viewer like its payloads: masked the same way.
  const detail = given === null ? null : maskText(given);
  return withInternalEvents(now, async (apply, tx) => {
    const outcome = await tx.recordAck(sourceId, id, result, detail, now);
    if (!outcome.ok) return outcome;
    if (outcome.repeated && (await tx.ackApplied(outcome.threadId, outcome.key))) return { ...outcome, threadStatus: null };
    const applied = await apply(outcome.threadId, {
      type: "directive.acked",
      turnId: outcome.turnId,
      // The engine knows directives by its own deterministic key, not by the database id.
      directiveId: outcome.key,
      ackResult: result,
      reason: detail,
    });
    return { ...outcome, threadStatus: applied?.state.status ?? null };
  });
}
