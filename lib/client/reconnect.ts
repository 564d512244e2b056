/**
 * When the browser opens the live stream again after it ended or failed (components/live/
 * live-updates.tsx). Every end or failure counts; a stream that stayed open HEALTHY_AFTER_MS
 * clears the count. The wait doubles from RECONNECT_FIRST_MS up to RECONNECT_MAX_MS, each drawn
 * in its upper half so the streams a server ended together (its restart, their lifetime) come
 * back spread out; after RECONNECT_ATTEMPTS in a row the tab stops trying (a reload starts
 * again) and its queries poll instead. A refused stream (401/403) is never retried: the tab is
 * signed out. Nothing here loops forever.
 */
export const RECONNECT_FIRST_MS = 1_000;
export const RECONNECT_MAX_MS = 60_000;
export const RECONNECT_ATTEMPTS = 12;
export const HEALTHY_AFTER_MS = 30_000;

/** The wait before the next attempt after `failures` ends or failures in a row; null: stop trying. */
export function reconnectDelay(failures: number, retryAfterS: number | null = null, random: () => number = Math.random): number | null {
  if (failures >= RECONNECT_ATTEMPTS) return null;
  const ceiling = Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** Math.max(0, failures));
  const wait = Math.round(ceiling / 2 + (random() * ceiling) / 2);
  // A 429's Retry-After is honoured when it asks for longer.
  return retryAfterS !== null && Number.isFinite(retryAfterS) ? Math.max(wait, retryAfterS * 1000) : wait;
}

/** What a probe of the stream's URL answered: signed out, refused for now (with its Retry-After), or fine. */
export type ProbeOutcome = { kind: "signed-out" } | { kind: "retry"; retryAfterS: number | null };

/** Reads a probe's status: 401/403 mean the credentials the tab holds are no longer good. */
export function probeOutcome(status: number | null, retryAfter: string | null): ProbeOutcome {
  if (status === 401 || status === 403) return { kind: "signed-out" };
  const seconds = retryAfter === null ? null : Number(retryAfter);
  return { kind: "retry", retryAfterS: seconds !== null && Number.isFinite(seconds) && seconds >= 0 ? seconds : null };
}
