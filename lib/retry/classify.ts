import type { ErrorReport, TroubleKind } from "./types";

/**
 * What kind of trouble an error is. Evidence in order of strength: an explicit HTTP
 * status, then a typed code, then text. Text never overrides an explicit status.
 */
export interface Classification {
  kind: TroubleKind;
  httpStatus: number | null;
  /** The typed code as reported (codexErrorInfo variant or provider code), unknown ones kept. */
  code: string | null;
  evidence: "status" | "code" | "text" | "none";
}

/** Typed codes we recognise. Anything else is kept as given and decides nothing. */
const CODE_KINDS = new Map<string, TroubleKind>(Object.entries({
  // codexErrorInfo variants
  serverOverloaded: "capacity",
  serverOverloadedBeforeInput: "capacity",
  usageLimitExceeded: "usage_limit",
  rateLimitExceeded: "rate_limit",
  unauthorized: "auth",
  badRequest: "invalid_request",
  contextWindowExceeded: "invalid_request",
  internalServerError: "transport",
  httpConnectionFailed: "transport",
  responseStreamConnectionFailed: "transport",
  responseStreamDisconnected: "transport",
  responseTooManyFailedAttempts: "transport",
  // provider codes (OpenAI / Responses, Google, Anthropic error types, Claude Code's `error`)
  rate_limit_exceeded: "rate_limit",
  resource_exhausted: "rate_limit",
  // slow_down is capacity only on a 503 (the status decides that); alone it asks the client to
  // slow its own request rate, which is a rate limit.
  slow_down: "rate_limit",
  rate_limit: "rate_limit",
  rate_limit_error: "rate_limit",
  server_is_overloaded: "capacity",
  overloaded_error: "capacity",
  overloaded: "capacity",
  usage_limit_reached: "usage_limit",
  insufficient_quota: "usage_limit",
  invalid_api_key: "auth",
  authentication_error: "auth",
  permission_error: "auth",
  invalid_request_error: "invalid_request",
  context_length_exceeded: "invalid_request",
  not_found_error: "invalid_request",
  request_too_large: "invalid_request",
  server_error: "transport",
  api_error: "transport",
} satisfies Record<string, TroubleKind>));

/**
 * Transport codes only say how a request broke (a dropped stream, retries that ran out), not
 * why; Codex reports a 429 as `responseStreamDisconnected` with a null status, so text may
 * still tell the real kind.
 */
const WEAK_KINDS: ReadonlySet<TroubleKind> = new Set(["transport"]);

// Claude signed in with OAuth names its windows: "You've hit your session limit · resets 12:28pm (UTC)",
// "weekly limit", "5-hour limit reached".
const USAGE_TEXT = /usage limit|session limit|weekly limit|\b\d+-hour limit|quota exceeded|exceeded your (?:current )?quota|insufficient[ _]quota/i;
const RATE_TEXT = /\b429\b|too many requests|rate[\s_-]?limit|reset in/i;
const CAPACITY_TEXT = /at capacity|overloaded|\b503\b|\b529\b/i;

export function classify(error: ErrorReport | null | undefined): Classification {
  if (!error) return { kind: "other", httpStatus: null, code: null, evidence: "none" };
  const variant = codexVariant(error);
  const code = variant.name ?? knownDetailCode(error.details);
  const httpStatus = validStatus(error.httpStatus) ?? variant.httpStatus ?? detailStatus(error.details);
  const codeKind = code === null ? null : (CODE_KINDS.get(code) ?? null);

  if (httpStatus !== null) {
    const statusKind = kindForStatus(httpStatus);
    if (statusKind === "rate_limit") {
      // A 429 is the rate-limit family; only a usage/quota signal narrows it to a usage limit.
      if (codeKind === "usage_limit") return { kind: "usage_limit", httpStatus, code, evidence: "code" };
      if (USAGE_TEXT.test(errorText(error))) return { kind: "usage_limit", httpStatus, code, evidence: "text" };
    }
    if (statusKind !== null) return { kind: statusKind, httpStatus, code, evidence: "status" };
    // A status that names no kind (409, 418, 3xx…) still forbids text from deciding.
    if (codeKind !== null && !WEAK_KINDS.has(codeKind)) return { kind: codeKind, httpStatus, code, evidence: "code" };
    return { kind: "other", httpStatus, code, evidence: "status" };
  }

  if (codeKind !== null && !WEAK_KINDS.has(codeKind)) return { kind: codeKind, httpStatus, code, evidence: "code" };
  const textKind = kindForText(errorText(error));
  if (textKind !== null) return { kind: textKind, httpStatus, code, evidence: "text" };
  if (codeKind !== null) return { kind: codeKind, httpStatus, code, evidence: "code" };
  return { kind: "other", httpStatus, code, evidence: "none" };
}

/** Auth and invalid-request failures never recover by waiting, so they are never shown as retrying. */
export function isRetryableKind(kind: TroubleKind): boolean {
  return kind !== "auth" && kind !== "invalid_request";
}

function kindForStatus(status: number): TroubleKind | null {
  switch (status) {
    case 401:
    case 403:
      return "auth";
    case 400:
    case 404:
    case 413:
    case 422:
      return "invalid_request";
    case 402:
      return "usage_limit";
    case 429:
      return "rate_limit";
    // A bare 503 is how providers say "overloaded"; we count it as capacity even without a code.
    case 503:
    case 529:
      return "capacity";
    case 408:
      return "transport";
  }
  return status >= 500 ? "transport" : null;
}

function kindForText(text: string): TroubleKind | null {
  if (!text) return null;
  if (USAGE_TEXT.test(text)) return "usage_limit";
  if (RATE_TEXT.test(text)) return "rate_limit";
  if (CAPACITY_TEXT.test(text)) return "capacity";
  return null;
}

/**
 * Every human-readable text of an error: the message plus the provider's own words, which
 * adapters keep in `details` (Codex `additionalDetails`, a provider body's `error.message`).
 */
export function errorText(error: ErrorReport): string {
  const parts: string[] = [];
  if (typeof error.message === "string") parts.push(error.message);
  const details = error.details;
  if (typeof details === "string") parts.push(details);
  else if (isRecord(details)) {
    for (const key of ["additionalDetails", "message", "body"]) {
      const value = details[key];
      if (typeof value === "string") parts.push(value);
    }
    const nested = details.error;
    if (isRecord(nested) && typeof nested.message === "string") parts.push(nested.message);
  }
  return parts.join("\n");
}

interface Variant {
  name: string | null;
  httpStatus: number | null;
}

/**
 * The codexErrorInfo variant: a unit variant string ("serverOverloaded"), or a single-key
 * object ({"responseStreamDisconnected":{"httpStatusCode":429}}) given in `code` (as an object
 * or its JSON text) or kept by the adapter in `details.codexErrorInfo`.
 */
function codexVariant(error: ErrorReport): Variant {
  const raw: unknown = error.code;
  const fromCode = variantOf(typeof raw === "string" && raw.trimStart().startsWith("{") ? parseJson(raw) : raw);
  if (fromCode.name !== null && fromCode.httpStatus !== null) return fromCode;
  const details = error.details;
  const kept = isRecord(details) ? variantOf(details.codexErrorInfo) : { name: null, httpStatus: null };
  return { name: fromCode.name ?? kept.name, httpStatus: fromCode.httpStatus ?? kept.httpStatus };
}

function variantOf(value: unknown): Variant {
  if (typeof value === "string") {
    const name = value.trim();
    return { name: name || null, httpStatus: null };
  }
  if (!isRecord(value)) return { name: null, httpStatus: null };
  const keys = Object.keys(value);
  if (keys.length !== 1) return { name: null, httpStatus: null };
  const inner = value[keys[0]];
  return { name: keys[0], httpStatus: isRecord(inner) ? validStatus(inner.httpStatusCode) : null };
}

/** Provider codes inside a kept body (OpenAI `error.code`, Anthropic `error.type`): only known ones. */
function knownDetailCode(details: unknown): string | null {
  if (!isRecord(details)) return null;
  const nested = isRecord(details.error) ? details.error : null;
  for (const value of [nested?.code, nested?.type, details.code, details.type]) {
    if (typeof value === "string" && CODE_KINDS.has(value)) return value;
  }
  return null;
}

/** Claude's `error_status` / `api_error_status` when an adapter kept them in `details`. */
function detailStatus(details: unknown): number | null {
  if (!isRecord(details)) return null;
  return validStatus(details.error_status) ?? validStatus(details.api_error_status);
}

function validStatus(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value >= 100 && value <= 599 ? value : null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
