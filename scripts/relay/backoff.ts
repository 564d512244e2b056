/**
 * Backoff for talking to the radar server: exponential with jitter, but the server's own
 * `Retry-After` (on 429/503, or any response that carries it) wins when it is valid.
 */
export interface BackoffOptions {
  /** First delay (failure 1). */
  baseMs: number;
  /** Largest delay without server advice. */
  maxMs: number;
  factor: number;
  /** ± fraction of the delay, 0..1. */
  jitter: number;
  /** Largest `Retry-After` honoured as given; longer advice is capped here (and said so). */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 500, maxMs: 30_000, factor: 2, jitter: 0.2, maxRetryAfterMs: 300_000 };

/** Delay before retry number `failures` (1 = after the first failure), without server advice. */
export function backoffDelay(failures: number, options: BackoffOptions = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const n = Math.max(1, Math.floor(failures));
  const raw = Math.min(options.maxMs, options.baseMs * options.factor ** (n - 1));
  const spread = raw * options.jitter * (random() * 2 - 1);
  return Math.max(0, Math.round(Math.min(options.maxMs, raw + spread)));
}

/**
 * `Retry-After` → milliseconds from `now`: delta-seconds ("4", "1.5") or an HTTP-date.
 * Returns null for a missing, unparseable or negative value.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (text === "") return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  if (/^-/.test(text)) return null;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}

export interface RetryDecision {
  delayMs: number;
  /** "retry-after": the server said how long; "backoff": our own schedule. */
  source: "retry-after" | "backoff";
  /** True when the server's advice was longer than maxRetryAfterMs and was capped. */
  capped: boolean;
}

export function nextRetry(
  input: { failures: number; status?: number | null; retryAfter?: string | null; now?: number },
  options: BackoffOptions = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): RetryDecision {
  const advised = parseRetryAfter(input.retryAfter ?? null, input.now ?? Date.now());
  if (advised !== null) {
    const capped = advised > options.maxRetryAfterMs;
    // Never hammer: an advice of 0 still waits a little.
    return { delayMs: Math.max(100, Math.min(advised, options.maxRetryAfterMs)), source: "retry-after", capped };
  }
  let delay = backoffDelay(input.failures, options, random);
  // A busy server (429/503) without advice gets at least a second.
  if (input.status === 429 || input.status === 503) delay = Math.max(delay, 1000);
  return { delayMs: delay, source: "backoff", capped: false };
}
