import { describe, expect, it } from "vitest";
import { classify, isRetryableKind } from "./classify";
import type { ErrorReport, TroubleKind } from "./types";

type Row = [string, ErrorReport | null, TroubleKind, "status" | "code" | "text" | "none"];

describe("classify: an explicit HTTP status is the strongest evidence", () => {
  it.each<Row>([
    ["429 is a rate limit", { httpStatus: 429 }, "rate_limit", "status"],
    ["503 is capacity, even without a code", { httpStatus: 503 }, "capacity", "status"],
    ["529 is capacity", { httpStatus: 529 }, "capacity", "status"],
    ["401 is auth", { httpStatus: 401 }, "auth", "status"],
    ["403 is auth", { httpStatus: 403 }, "auth", "status"],
    ["400 is an invalid request", { httpStatus: 400 }, "invalid_request", "status"],
    ["404 is an invalid request", { httpStatus: 404 }, "invalid_request", "status"],
    ["413 is an invalid request", { httpStatus: 413 }, "invalid_request", "status"],
    ["422 is an invalid request", { httpStatus: 422 }, "invalid_request", "status"],
    ["402 is a usage limit", { httpStatus: 402 }, "usage_limit", "status"],
    ["500 is transport", { httpStatus: 500 }, "transport", "status"],
    ["502 is transport", { httpStatus: 502 }, "transport", "status"],
    ["504 is transport", { httpStatus: 504 }, "transport", "status"],
    ["408 is transport", { httpStatus: 408 }, "transport", "status"],
    ["500 with 'rate limit' text stays transport: a non-matching status beats text", { httpStatus: 500, message: "rate limit reached" }, "transport", "status"],
    ["401 with '429' text stays auth", { httpStatus: 401, message: "429 Too Many Requests" }, "auth", "status"],
    ["a status that names no kind (409) with rate-limit text is other, never text-decided", { httpStatus: 409, message: "rate limit" }, "other", "status"],
    ["a status that names no kind (409) still lets a typed code decide", { httpStatus: 409, code: "rate_limit_exceeded" }, "rate_limit", "code"],
    ["a 500 with server_is_overloaded is transport: the status decides", { httpStatus: 500, code: "server_is_overloaded" }, "transport", "status"],
    ["slow_down on a 503 is capacity", { httpStatus: 503, code: "slow_down" }, "capacity", "status"],
    ["slow_down on a 429 is a rate limit", { httpStatus: 429, code: "slow_down" }, "rate_limit", "status"],
    ["a 429 whose code is usage_limit_reached is a usage limit", { httpStatus: 429, code: "usage_limit_reached" }, "usage_limit", "code"],
    ["a 429 whose code is insufficient_quota is a usage limit", { httpStatus: 429, code: "insufficient_quota" }, "usage_limit", "code"],
    ["a 429 whose text says usage limit is a usage limit", { httpStatus: 429, message: "You've hit your usage limit. Try again at 5:59 PM." }, "usage_limit", "text"],
    ["a 429 whose text says quota exceeded is a usage limit", { httpStatus: 429, message: "quota exceeded for this month" }, "usage_limit", "text"],
    ["Claude's OAuth 429 'session limit' is a usage limit", { httpStatus: 429, message: "You've hit your session limit · resets 12:28pm (UTC)" }, "usage_limit", "text"],
    ["a 429 naming the weekly limit is a usage limit", { httpStatus: 429, message: "You've hit your weekly limit · resets Dec 4, 11pm" }, "usage_limit", "text"],
    ["a 429 naming the 5-hour limit is a usage limit", { httpStatus: 429, message: "5-hour limit reached ∙ resets 3pm" }, "usage_limit", "text"],
    ["a 429 with a capacity code stays a rate limit", { httpStatus: 429, code: "serverOverloaded" }, "rate_limit", "status"],
  ])("%s", (_name, error, kind, evidence) => {
    expect(classify(error)).toMatchObject({ kind, evidence });
  });
});

describe("classify: Codex codexErrorInfo, as a unit variant, a nested object or its JSON text", () => {
  it.each<Row>([
    ["serverOverloaded is capacity", { code: "serverOverloaded" }, "capacity", "code"],
    ["serverOverloadedBeforeInput is capacity", { code: "serverOverloadedBeforeInput" }, "capacity", "code"],
    ["usageLimitExceeded is a usage limit", { code: "usageLimitExceeded" }, "usage_limit", "code"],
    ["rateLimitExceeded is a rate limit", { code: "rateLimitExceeded" }, "rate_limit", "code"],
    ["unauthorized is auth", { code: "unauthorized" }, "auth", "code"],
    ["badRequest is an invalid request", { code: "badRequest" }, "invalid_request", "code"],
    ["contextWindowExceeded is an invalid request", { code: "contextWindowExceeded" }, "invalid_request", "code"],
    ["internalServerError is transport", { code: "internalServerError" }, "transport", "code"],
    ["httpConnectionFailed is transport", { code: "httpConnectionFailed" }, "transport", "code"],
    ["responseStreamConnectionFailed is transport", { code: "responseStreamConnectionFailed" }, "transport", "code"],
    ["responseStreamDisconnected is transport", { code: "responseStreamDisconnected" }, "transport", "code"],
    [
      "responseStreamDisconnected with httpStatusCode 429 (object in details.codexErrorInfo) is a rate limit",
      { code: "responseStreamDisconnected", details: { codexErrorInfo: { responseStreamDisconnected: { httpStatusCode: 429 } } } },
      "rate_limit",
      "status",
    ],
    [
      "the nested object given in code as JSON text is read for its httpStatusCode",
      { code: '{"responseStreamDisconnected":{"httpStatusCode":429}}' },
      "rate_limit",
      "status",
    ],
    [
      "responseTooManyFailedAttempts takes the kind of its httpStatusCode (429)",
      { code: "responseTooManyFailedAttempts", details: { codexErrorInfo: { responseTooManyFailedAttempts: { httpStatusCode: 429 } } } },
      "rate_limit",
      "status",
    ],
    [
      "responseTooManyFailedAttempts with a 503 is capacity",
      { code: '{"responseTooManyFailedAttempts":{"httpStatusCode":503}}' },
      "capacity",
      "status",
    ],
    [
      "a disconnect with a null status lets the text tell: '429 Too Many Requests' is a rate limit",
      { code: "responseStreamDisconnected", details: { additionalDetails: "exceeded retry limit, last status: 429 Too Many Requests, request id: req_1" } },
      "rate_limit",
      "text",
    ],
    [
      "a disconnect with a null status and capacity text is capacity",
      { code: "responseStreamDisconnected", details: { additionalDetails: "Selected model is at capacity. Please try a different model." } },
      "capacity",
      "text",
    ],
    ["a disconnect with no telling text stays transport", { code: "responseStreamDisconnected", message: "Reconnecting... 1/5" }, "transport", "code"],
  ])("%s", (_name, error, kind, evidence) => {
    expect(classify(error)).toMatchObject({ kind, evidence });
  });
});

describe("classify: provider codes and Claude's error field", () => {
  it.each<Row>([
    ["rate_limit_exceeded is a rate limit", { code: "rate_limit_exceeded" }, "rate_limit", "code"],
    ["resource_exhausted is a rate limit", { code: "resource_exhausted" }, "rate_limit", "code"],
    ["slow_down without a status is a rate limit (capacity needs an explicit 503)", { code: "slow_down" }, "rate_limit", "code"],
    ["server_is_overloaded is capacity", { code: "server_is_overloaded" }, "capacity", "code"],
    ["overloaded_error is capacity", { code: "overloaded_error" }, "capacity", "code"],
    ["usage_limit_reached is a usage limit", { code: "usage_limit_reached" }, "usage_limit", "code"],
    ["insufficient_quota is a usage limit", { code: "insufficient_quota" }, "usage_limit", "code"],
    ["Claude error 'rate_limit' is a rate limit", { code: "rate_limit" }, "rate_limit", "code"],
    ["Claude error 'overloaded' is capacity", { code: "overloaded" }, "capacity", "code"],
    ["Claude error_status 529 kept in details is the status", { details: { error_status: 529 } }, "capacity", "status"],
    ["a provider body's error.type overloaded_error is read", { details: { type: "error", error: { type: "overloaded_error" } } }, "capacity", "code"],
    ["a typed code beats contradicting text", { code: "server_is_overloaded", message: "rate limit" }, "capacity", "code"],
  ])("%s", (_name, error, kind, evidence) => {
    expect(classify(error)).toMatchObject({ kind, evidence });
  });
});

describe("classify: text signals decide only when nothing else does", () => {
  it.each<Row>([
    ["'429' is a rate limit", { message: "last status: 429 Too Many Requests" }, "rate_limit", "text"],
    ["'too many requests' is a rate limit", { message: "Too many requests" }, "rate_limit", "text"],
    ["'rate limit' is a rate limit", { message: "Rate limit reached for gpt-5" }, "rate_limit", "text"],
    ["'hit your rate limit' is a rate limit", { message: "You've hit your rate limit." }, "rate_limit", "text"],
    ["'reset in' is a rate limit", { message: "wait for your limit to reset in under a minute" }, "rate_limit", "text"],
    ["'at capacity' is capacity", { message: "Selected model is at capacity." }, "capacity", "text"],
    ["'overloaded' is capacity", { message: "API Error: Overloaded" }, "capacity", "text"],
    ["'503' is capacity", { message: "last status: 503 Service Unavailable" }, "capacity", "text"],
    ["'529' is capacity", { message: "API Error: 529" }, "capacity", "text"],
    ["'usage limit' is a usage limit", { message: "You've hit your usage limit" }, "usage_limit", "text"],
    ["'quota exceeded' is a usage limit", { message: "Quota exceeded" }, "usage_limit", "text"],
    ["digits inside a request id are not a status", { message: "failed, request id: req_mock_45ec0f8260cc63b2 and req_4290ab" }, "other", "none"],
    ["text is case-insensitive", { message: "TOO MANY REQUESTS" }, "rate_limit", "text"],
  ])("%s", (_name, error, kind, evidence) => {
    expect(classify(error)).toMatchObject({ kind, evidence });
  });
});

describe("classify: open enums", () => {
  it("an unknown code is kept and classified as other", () => {
    expect(classify({ code: "sandboxError" })).toEqual({ kind: "other", httpStatus: null, code: "sandboxError", evidence: "none" });
  });
  it("an unknown code with telling text is classified by the text, code kept", () => {
    expect(classify({ code: "brandNewVariant", message: "429 Too Many Requests" })).toMatchObject({ kind: "rate_limit", code: "brandNewVariant" });
  });
  it.each([
    ["null", null],
    ["undefined", undefined],
    ["an empty report", {}],
    ["an out-of-range status", { httpStatus: 1234 }],
    ["malformed JSON in code", { code: "{not json" }],
    ["a prototype name as code", { code: "constructor" }],
  ])("%s never throws and is other", (_name, error) => {
    expect(classify(error as ErrorReport | null).kind).toBe("other");
  });
  it("returns the status and the code it used", () => {
    expect(classify({ code: "responseStreamDisconnected", details: { codexErrorInfo: { responseStreamDisconnected: { httpStatusCode: 429 } } } })).toEqual({
      kind: "rate_limit",
      httpStatus: 429,
      code: "responseStreamDisconnected",
      evidence: "status",
    });
  });
});

describe("isRetryableKind: auth and invalid requests are never shown as retrying", () => {
  it.each<[TroubleKind, boolean]>([
    ["rate_limit", true],
    ["capacity", true],
    ["usage_limit", true],
    ["transport", true],
    ["other", true],
    ["auth", false],
    ["invalid_request", false],
  ])("%s → %s", (kind, retryable) => {
    expect(isRetryableKind(kind)).toBe(retryable);
  });
});
