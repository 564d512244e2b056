/**
 * Canonical events of POST /api/v1/events. Validated with zod; every error names
 * its field path ("error.httpStatus: expected an integer between 100 and 599"). Unknown extra
 * fields are not rejected: they stay in the raw payload (the normalized event only carries the
 * known ones).
 */
import { z } from "zod";
import { EVENT_TYPES, type PolicyRef } from "../retry/types";
import { isPlainCanonicalEvent } from "./canonical-check";
import { codexErrorInfoParts } from "./codex-error";
import { deriveKey, keyMaterial } from "./key";
import { headerLimitSnapshots, LIMIT_STATUSES, statusOfPercent, type LimitSnapshot } from "./limit-snapshots";
import { MAX_HEADERS, MAX_ID_CHARS, MAX_NAME_CHARS, MAX_TITLE_CHARS } from "./limits";
import { parseEventTime } from "./time";
import type { NormalizedEvent, NormalizedLine } from "./types";
import { isObject, type JsonObject } from "./util";

const ID_MAX = MAX_ID_CHARS;
const TEXT_MAX = MAX_NAME_CHARS;
const TITLE_MAX = MAX_TITLE_CHARS;

type IssueInput = { input?: unknown };
const requiredOr = (message: string) => (issue: IssueInput) => (issue.input === undefined ? "required" : message);

const idString = (what = "a non-empty string") => {
  const msg = `expected ${what} of at most ${ID_MAX} characters`;
  return z.string({ error: requiredOr(msg) }).min(1, { error: msg }).max(ID_MAX, { error: msg });
};
const optText = (max = TEXT_MAX) => {
  const msg = `expected a string of at most ${max} characters`;
  return z.string({ error: msg }).max(max, { error: msg }).nullable().optional();
};
const intField = (min: number, max: number | null, msg: string) => {
  let s = z.int({ error: msg }).min(min, { error: msg });
  if (max !== null) s = s.max(max, { error: msg });
  return s;
};

const TYPE_MESSAGE = `expected one of ${EVENT_TYPES.join(", ")}`;
const HTTP_STATUS_MESSAGE = "expected an integer between 100 and 599";

export const canonicalErrorSchema = z.looseObject(
  {
    httpStatus: intField(100, 599, HTTP_STATUS_MESSAGE).nullable().optional(),
    code: z
      .union([z.string().max(TEXT_MAX), z.record(z.string(), z.unknown())], {
        error: `expected a string of at most ${TEXT_MAX} characters or a codexErrorInfo object`,
      })
      .nullable()
      .optional(),
    message: z.string({ error: "expected a string" }).nullable().optional(),
    retryAfter: z
      .union([z.string(), z.number()], { error: "expected a string (delta-seconds or HTTP-date) or a number of seconds" })
      .nullable()
      .optional(),
    headers: z
      .record(z.string(), z.string({ error: "expected a string header value" }), {
        error: "expected an object of string header values",
      })
      .refine((headers) => Object.keys(headers).length <= MAX_HEADERS, { error: `expected at most ${MAX_HEADERS} headers` })
      .nullable()
      .optional(),
    details: z.unknown().optional(),
  },
  { error: "expected an object {httpStatus, code, message, retryAfter, headers, details}" },
);

export const canonicalEventSchema = z.looseObject({
  id: idString().optional(),
  threadId: idString(),
  turnId: idString().nullable().optional(),
  parentThreadId: idString().nullable().optional(),
  type: z.enum(EVENT_TYPES, { error: (issue: IssueInput) => (issue.input === undefined ? `required (${TYPE_MESSAGE})` : TYPE_MESSAGE) }),
  at: z.union([z.string(), z.number()], { error: "expected an ISO-8601 string or epoch milliseconds" }).optional(),
  agent: optText(),
  provider: optText(),
  model: optText(),
  title: optText(TITLE_MAX),
  policy: z
    .union([z.string().min(1).max(TEXT_MAX), z.looseObject({})], { error: "expected a policy preset name or a custom policy object" })
    .nullable()
    .optional(),
  attempt: intField(0, null, "expected an integer ≥ 0").nullable().optional(),
  maxAttempts: intField(1, null, "expected an integer ≥ 1 or null (unlimited)").nullable().optional(),
  delayMs: z
    .number({ error: "expected a number of milliseconds ≥ 0" })
    .min(0, { error: "expected a number of milliseconds ≥ 0" })
    .nullable()
    .optional(),
  error: canonicalErrorSchema.nullable().optional(),
  willRetry: z.boolean({ error: "expected true or false" }).nullable().optional(),
  attemptsMade: intField(1, null, "expected an integer ≥ 1 (calls made, the first included)").nullable().optional(),
  retryMs: z
    .number({ error: "expected a number of milliseconds ≥ 0" })
    .min(0, { error: "expected a number of milliseconds ≥ 0" })
    .nullable()
    .optional(),
  progressCount: intField(1, null, "expected an integer ≥ 1").nullable().optional(),
});

export type CanonicalEventInput = z.input<typeof canonicalEventSchema>;
export type CanonicalEventOutput = z.output<typeof canonicalEventSchema>;

const PERCENT_MESSAGE = "expected a number between 0 and 100";
const RESET_MESSAGE = "expected an ISO-8601 string or epoch milliseconds";

/**
 * `limit.updated`: one usage window of a provider account. The thread is optional (a window is
 * the account's, not a thread's); the status defaults from the used share.
 */
export const limitUpdatedSchema = z.looseObject({
  id: idString().optional(),
  threadId: idString().nullable().optional(),
  type: z.literal("limit.updated"),
  at: z.union([z.string(), z.number()], { error: "expected an ISO-8601 string or epoch milliseconds" }).optional(),
  account: optText(),
  provider: z.string({ error: requiredOr(`expected a string of at most ${TEXT_MAX} characters`) }).min(1).max(TEXT_MAX),
  window: z.string({ error: requiredOr(`expected a string of at most ${TEXT_MAX} characters`) }).min(1).max(TEXT_MAX),
  usedPercent: z.number({ error: PERCENT_MESSAGE }).min(0, { error: PERCENT_MESSAGE }).max(100, { error: PERCENT_MESSAGE }).nullable().optional(),
  windowMinutes: z.number({ error: "expected a number of minutes > 0" }).positive({ error: "expected a number of minutes > 0" }).nullable().optional(),
  resetsAt: z
    .union([z.iso.datetime({ offset: true, error: RESET_MESSAGE }), z.number({ error: RESET_MESSAGE }).positive({ error: RESET_MESSAGE })], { error: RESET_MESSAGE })
    .nullable()
    .optional(),
  status: z.enum(LIMIT_STATUSES, { error: `expected one of ${LIMIT_STATUSES.join(", ")}` }).optional(),
});

export type CanonicalResult = { ok: true; line: NormalizedLine } | { ok: false; error: string };

function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = issue.path.map(String).join(".");
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join("; ");
}

function lowerCaseHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}

/**
 * Validates an item against its schema and resolves its `at`; every problem named by its field.
 * `check`, when given, answers the common case without the schema (null: the schema decides).
 */
function parseWithTime<S extends z.ZodType>(
  schema: S,
  item: JsonObject,
  receivedAt: number,
  check?: (item: JsonObject) => z.output<S> | null,
): { ok: true; value: z.output<S>; at: number } | { ok: false; error: string } {
  const checked = check?.(item);
  const parsed = checked ? ({ success: true, data: checked } as const) : schema.safeParse(item);
  const problems: string[] = [];
  if (!parsed.success) problems.push(formatIssues(parsed.error.issues));
  let at = receivedAt;
  if (item.at !== undefined && (parsed.success || !parsed.error.issues.some((i) => i.path[0] === "at"))) {
    const t = parseEventTime(item.at, receivedAt);
    if (t.ok) at = t.at;
    else problems.push(`at: ${t.message}`);
  }
  if (problems.length > 0 || !parsed.success) return { ok: false, error: problems.join("; ") };
  return { ok: true, value: parsed.data, at };
}

/**
 * Validate and normalize one canonical event. `index` only fills NormalizedLine.index.
 * Without `id`, the idempotency key is derived as in key.ts.
 */
export function normalizeCanonical(item: unknown, receivedAt: number, index = 0): CanonicalResult {
  if (!isObject(item)) return { ok: false, error: "expected a JSON object" };
  if (item.type === "limit.updated") return normalizeLimitUpdated(item, receivedAt, index);
  const parsed = parseWithTime(canonicalEventSchema, item, receivedAt, (event) => (isPlainCanonicalEvent(event) ? (event as CanonicalEventOutput) : null));
  if (!parsed.ok) return parsed;
  const { value: v, at } = parsed;

  const event: NormalizedEvent = { type: v.type, at, threadId: v.threadId };
  if (v.turnId !== undefined) event.turnId = v.turnId;
  if (v.parentThreadId !== undefined) event.parentThreadId = v.parentThreadId;
  if (v.agent !== undefined) event.agent = v.agent;
  if (v.provider !== undefined) event.provider = v.provider;
  if (v.model !== undefined) event.model = v.model;
  if (v.title !== undefined) event.title = v.title;
  if (v.policy !== undefined) event.policy = v.policy as PolicyRef | null;
  if (v.attempt !== undefined) event.attempt = v.attempt;
  if (v.maxAttempts !== undefined) event.maxAttempts = v.maxAttempts;
  if (v.delayMs !== undefined) event.delayMs = v.delayMs;
  if (v.willRetry !== undefined) event.willRetry = v.willRetry;
  if (v.attemptsMade !== undefined) event.attemptsMade = v.attemptsMade;
  if (v.retryMs !== undefined) event.retryMs = v.retryMs;
  if (v.progressCount !== undefined) {
    event.progressCount = v.progressCount;
    if (v.type === "progress") event.lastAt = at;
  }
  if (v.error !== undefined) {
    if (v.error === null) {
      event.error = null;
    } else {
      const e = v.error;
      let code: string | null | undefined = typeof e.code === "string" || e.code === null ? e.code : undefined;
      let httpStatus = e.httpStatus;
      let details: unknown = e.details;
      if (isObject(e.code)) {
        // A codexErrorInfo object: its variant name is the code, its httpStatusCode the status
        // when none was given, and the object is kept as given in details.codexErrorInfo.
        const parts = codexErrorInfoParts(e.code);
        code = parts.code;
        if (httpStatus === undefined || httpStatus === null) httpStatus = parts.httpStatus ?? httpStatus;
        details =
          details === undefined
            ? { codexErrorInfo: e.code }
            : isObject(details)
              ? { ...details, codexErrorInfo: e.code }
              : { value: details, codexErrorInfo: e.code };
      }
      event.error = {};
      if (httpStatus !== undefined) event.error.httpStatus = httpStatus;
      if (code !== undefined) event.error.code = code;
      if (e.message !== undefined) event.error.message = e.message;
      if (e.retryAfter !== undefined) event.error.retryAfter = e.retryAfter;
      if (e.headers !== undefined) event.error.headers = e.headers === null ? null : lowerCaseHeaders(e.headers);
      if (details !== undefined) event.error.details = details;
    }
  }

  const line: NormalizedLine = { index, event, nativeType: null, format: "canonical", idempotencyKey: canonicalKey(item, v.id, v.threadId, receivedAt, at), raw: item, receivedAt };
  // Provider headers a proxy passed on also say how full the account's windows are.
  if (event.error?.headers) {
    const limits = headerLimitSnapshots(event.error.headers, event.provider ?? "unknown", at, v.threadId);
    if (limits.length) line.limits = limits;
  }
  return { ok: true, line };
}

/**
 * Without `at`, the receive time tells a later identical event from a re-sent one. `at` is the
 * line's parsed `at`, else that receive time: the time the derived key starts with (key.ts).
 */
function canonicalKey(item: JsonObject, id: string | undefined, threadId: string | null, receivedAt: number, at: number): string {
  return id ?? deriveKey(keyMaterial({ format: "canonical", threadId, line: item, at: item.at === undefined ? receivedAt : null }), "canonical", at);
}

function normalizeLimitUpdated(item: JsonObject, receivedAt: number, index: number): CanonicalResult {
  const parsed = parseWithTime(limitUpdatedSchema, item, receivedAt);
  if (!parsed.ok) return parsed;
  const { value: v, at } = parsed;
  const threadId = v.threadId ?? null;
  const usedPercent = v.usedPercent ?? null;
  const snapshot: LimitSnapshot = {
    account: v.account ?? null,
    provider: v.provider,
    window: v.window,
    usedPercent,
    windowMinutes: v.windowMinutes ?? null,
    resetAt: v.resetsAt == null ? null : typeof v.resetsAt === "number" ? v.resetsAt : Date.parse(v.resetsAt),
    status: v.status ?? statusOfPercent(usedPercent),
    observedAt: at,
    threadId,
  };
  const event: NormalizedEvent | null = threadId ? { type: "limit.updated", at, threadId } : null;
  return {
    ok: true,
    line: { index, event, nativeType: null, format: "canonical", idempotencyKey: canonicalKey(item, v.id, threadId, receivedAt, at), raw: item, receivedAt, limits: [snapshot] },
  };
}
