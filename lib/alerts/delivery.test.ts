import { describe, expect, it } from "vitest";
import { decideDelivery, MAX_RETRY_AFTER_MS, retryAfterAt } from "./delivery";
import { signAlert, verifyAlertSignature, SIGNATURE_HEADER, TIMESTAMP_HEADER } from "./signature";

const now = Date.parse("2026-12-04T12:00:00Z");
const policy = { maxAttempts: 4, backoffMs: 1_000, maxBackoffMs: 5_000 };

describe("Retry-After", () => {
  it.each([
    ["2", now + 2_000],
    [" 0 ", now],
    ["Fri, 04 Dec 2026 12:00:30 GMT", now + 30_000],
    ["Fri, 04 Dec 2026 11:00:00 GMT", now],
    ["999999", now + MAX_RETRY_AFTER_MS],
    ["soon", null],
    ["", null],
    [null, null],
  ])("%j → %s", (value, expected) => expect(retryAfterAt(value, now)).toBe(expected));
});

describe("deciding after an attempt", () => {
  it.each([
    ["2xx is delivered", { status: 204 }, 1, { state: "delivered" }],
    ["503 backs off", { status: 503 }, 1, { state: "pending", nextAttemptAt: now + 1_000 }],
    ["backoff doubles", { status: 500 }, 3, { state: "pending", nextAttemptAt: now + 4_000 }],
    ["…up to its cap", { status: null, error: "timeout" }, 3, { state: "pending", nextAttemptAt: now + 4_000 }],
    ["Retry-After later than the backoff wins", { status: 503, retryAfter: "2" }, 1, { state: "pending", nextAttemptAt: now + 2_000 }],
    ["the backoff later than Retry-After wins", { status: 429, retryAfter: "0" }, 2, { state: "pending", nextAttemptAt: now + 2_000 }],
    ["a 4xx is final", { status: 404 }, 1, { state: "failed", why: "the receiver refused it (HTTP 404)" }],
    ["the last attempt fails", { status: 503 }, 4, { state: "failed", why: "no success after 4 attempts" }],
  ] as const)("%s", (_label, result, attempts, expected) => expect(decideDelivery(result, attempts, now, policy)).toEqual(expected));

  it("caps the backoff", () => {
    expect(decideDelivery({ status: 500 }, 3, now, { ...policy, maxAttempts: 10, maxBackoffMs: 3_000 })).toEqual({ state: "pending", nextAttemptAt: now + 3_000 });
  });
});

describe("signatures", () => {
  const secret = "whsec_test";
  const body = '{"id":1,"event":"incident.opened"}';
  const headers = signAlert(secret, body, now);
  const verify = (over: Partial<Parameters<typeof verifyAlertSignature>[0]>) =>
    verifyAlertSignature({ secret, body, timestamp: headers[TIMESTAMP_HEADER], signature: headers[SIGNATURE_HEADER], nowMs: now, ...over });

  it("verifies what it signed", () => expect(verify({})).toBe(true));
  it("refuses another body", () => expect(verify({ body: body.replace("1", "2") })).toBe(false));
  it("refuses another secret", () => expect(verify({ secret: "whsec_other" })).toBe(false));
  it("refuses a replay after the tolerance", () => expect(verify({ nowMs: now + 6 * 60_000 })).toBe(false));
  it("refuses a moved timestamp", () => expect(verify({ timestamp: String(Number(headers[TIMESTAMP_HEADER]) + 1) })).toBe(false));
  it("refuses a missing header", () => expect(verify({ signature: null })).toBe(false));
  it("accepts one of several signatures", () => expect(verify({ signature: `v1=deadbeef, ${headers[SIGNATURE_HEADER]}` })).toBe(true));
});
