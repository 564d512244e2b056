import { describe, expect, it } from "vitest";
import { backoffDelay, DEFAULT_BACKOFF, nextRetry, parseRetryAfter } from "./backoff";

const noJitter = { ...DEFAULT_BACKOFF, jitter: 0 };

describe("relay backoff", () => {
  it("doubles from the base and saturates at the cap", () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, noJitter))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffDelay(30, noJitter)).toBe(30_000);
  });

  it("keeps jitter within ±jitter and never above the cap", () => {
    expect(backoffDelay(3, DEFAULT_BACKOFF, () => 0)).toBe(1600);
    expect(backoffDelay(3, DEFAULT_BACKOFF, () => 1)).toBe(2400);
    expect(backoffDelay(20, DEFAULT_BACKOFF, () => 1)).toBe(30_000);
  });

  it("parses Retry-After as delta-seconds or an HTTP date, and ignores junk", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("4", now)).toBe(4000);
    expect(parseRetryAfter("1.5", now)).toBe(1500);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:07 GMT", now)).toBe(7000);
    expect(parseRetryAfter("Wed, 31 Dec 2025 23:59:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("-3", now)).toBeNull();
    expect(parseRetryAfter("soon", now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });

  it("honours the server's Retry-After over its own schedule, capped", () => {
    expect(nextRetry({ failures: 1, status: 429, retryAfter: "3" }, noJitter)).toEqual({ delayMs: 3000, source: "retry-after", capped: false });
    expect(nextRetry({ failures: 9, status: 503, retryAfter: "1" }, noJitter).delayMs).toBe(1000);
    expect(nextRetry({ failures: 1, status: 503, retryAfter: "86400" }, noJitter)).toEqual({ delayMs: 300_000, source: "retry-after", capped: true });
  });

  it("waits at least a second for a busy server without advice", () => {
    expect(nextRetry({ failures: 1, status: 429 }, noJitter)).toEqual({ delayMs: 1000, source: "backoff", capped: false });
    expect(nextRetry({ failures: 1, status: null }, noJitter).delayMs).toBe(500);
  });
});
