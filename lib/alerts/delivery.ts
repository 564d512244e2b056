/**
 * When the outbox tries an alert again: exponential backoff from the attempt count, never earlier
 * than the receiver's Retry-After (seconds or an HTTP date), and at most `maxAttempts` tries, then
 * the alert is `failed`. Pure: the clock is passed in.
 */

/** Where an alert in the outbox stands: waiting (to be sent or retried), delivered, or given up on. */
export const ALERT_STATES = ["pending", "delivered", "failed"] as const;
export type AlertState = (typeof ALERT_STATES)[number];

export interface DeliveryPolicy {
  maxAttempts: number;
  /** The wait after the first failed attempt; each further failure doubles it, up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
}

/** A Retry-After further out than this is capped: an alert an hour late is still worth sending. */
export const MAX_RETRY_AFTER_MS = 60 * 60_000;

/** The moment a Retry-After value names, or null when it names none. */
export function retryAfterAt(value: string | null | undefined, now: number): number | null {
  const text = value?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) return now + Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.min(Math.max(date, now), now + MAX_RETRY_AFTER_MS);
}

/** What one attempt came to. `status` is null when no answer came (refused, timed out, unreachable). */
export interface AttemptResult {
  status: number | null;
  retryAfter?: string | null;
  error?: string | null;
}

export type DeliveryDecision = { state: "delivered" } | { state: "failed"; why: string } | { state: "pending"; nextAttemptAt: number };

/** Answers that say "not now" rather than "never": everything else in 4xx will not change by retrying. */
const TRANSIENT_4XX = new Set([408, 409, 425, 429]);

/** After attempt number `attempts` (1 for the first) gave `result` at `now`. */
export function decideDelivery(result: AttemptResult, attempts: number, now: number, policy: DeliveryPolicy): DeliveryDecision {
  const { status } = result;
  if (status !== null && status >= 200 && status < 300) return { state: "delivered" };
  if (status !== null && status >= 400 && status < 500 && !TRANSIENT_4XX.has(status)) return { state: "failed", why: `the receiver refused it (HTTP ${status})` };
  if (attempts >= policy.maxAttempts) return { state: "failed", why: `no success after ${attempts} attempts` };
  const backoff = Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** (attempts - 1));
  return { state: "pending", nextAttemptAt: Math.max(now + backoff, retryAfterAt(result.retryAfter, now) ?? 0) };
}
