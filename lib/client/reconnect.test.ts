import { describe, expect, it } from "vitest";
import { probeOutcome, RECONNECT_ATTEMPTS, RECONNECT_FIRST_MS, RECONNECT_MAX_MS, reconnectDelay } from "./reconnect";

/** The browser's reconnection to the live stream is backed off and bounded. */
describe("reconnectDelay", () => {
  it("doubles from RECONNECT_FIRST_MS up to RECONNECT_MAX_MS, each wait in the upper half of its step", () => {
    const low = (n: number) => reconnectDelay(n, null, () => 0);
    const high = (n: number) => reconnectDelay(n, null, () => 1);
    expect([low(0), high(0)]).toEqual([RECONNECT_FIRST_MS / 2, RECONNECT_FIRST_MS]);
    expect(high(1)).toBe(2 * RECONNECT_FIRST_MS);
    expect(high(RECONNECT_ATTEMPTS - 1)).toBe(RECONNECT_MAX_MS);
  });
  it("stops after RECONNECT_ATTEMPTS failures in a row", () => {
    expect(reconnectDelay(RECONNECT_ATTEMPTS)).toBeNull();
    let total = 0;
    for (let n = 0; reconnectDelay(n, null, () => 1) !== null; n++) total += reconnectDelay(n, null, () => 1)!;
    expect(total).toBeLessThan(15 * 60_000);
  });
  it("honours a longer Retry-After", () => {
    expect(reconnectDelay(0, 5, () => 1)).toBe(5_000);
    expect(reconnectDelay(10, 5, () => 1)).toBe(RECONNECT_MAX_MS);
  });
});

describe("probeOutcome", () => {
  it("401 and 403 sign the tab out; anything else is retried, with its Retry-After", () => {
    expect(probeOutcome(401, null)).toEqual({ kind: "signed-out" });
    expect(probeOutcome(403, null)).toEqual({ kind: "signed-out" });
    expect(probeOutcome(429, "5")).toEqual({ kind: "retry", retryAfterS: 5 });
    expect(probeOutcome(null, null)).toEqual({ kind: "retry", retryAfterS: null });
    expect(probeOutcome(503, "soon")).toEqual({ kind: "retry", retryAfterS: null });
  });
});
