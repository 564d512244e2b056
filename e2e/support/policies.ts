/**
 * A short custom stall bound so the watchdog's work is seen in seconds, not minutes: the
 * deadline is the notice + 500 ms + 1 s. Sent inline with canonical events (`policy`).
 */
export const FAST_STALL_POLICY = {
  name: "test-fast-stall",
  kinds: ["rate_limit"],
  maxAttempts: 5,
  baseDelayMs: 500,
  factor: 2,
  maxDelayMs: 300_000,
  jitterMin: 0,
  jitterMax: 0,
  adviceCapMs: 300_000,
  graceMs: 1_000,
};
