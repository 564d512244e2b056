import { errorText, isRecord } from "./classify";
import { DURATION_PART, parseDuration } from "./duration";
import type { AdviceHint, AdviceSource, ErrorReport } from "./types";

/** Advice longer than a week is absurd (a bad unit or an epoch in the wrong field): ignored, never clamped. */
export const MAX_ADVICE_MS = 7 * 24 * 60 * 60 * 1000;

export interface IgnoredAdvice {
  source: AdviceSource;
  value: string;
  reason: string;
}

/** Every hint a provider or source gave. The authoritative one is the longest valid delay. */
export interface Advice {
  hints: AdviceHint[];
  authoritative: AdviceHint | null;
  ignored: IgnoredAdvice[];
}

const DAY_MS = 24 * 60 * 60 * 1000;
const MINUTE_MS = 60 * 1000;

/**
 * Hints sit at the start of what a provider says; reading only a bounded prefix keeps the
 * parser's work bounded whatever a source sends (a multi-MB message or header value).
 */
const TEXT_PREFIX_CHARS = 4096;
const VALUE_PREFIX_CHARS = 256;
const MAX_HEADERS_READ = 200;
const TRY_AGAIN_IN = new RegExp(`try again in\\s+((?:${DURATION_PART}\\s*)+)`, "gi");
const TRY_AGAIN = /try again/i;
const TRY_AGAIN_AT = /try again at\s+(\d{1,2}):(\d{2})(?:\s*([ap])\.?m\.?\b)?/gi;
/** Claude's "resets 12:28pm (UTC)", "limit will reset at 5pm": an hour alone needs am/pm. */
const RESETS_AT = /\bresets?\s+(?:at\s+)?(\d{1,2})(?::(\d{2}))?(?:\s*([ap])\.?m\.?\b)?/gi;
const ANTHROPIC_RESET = /^anthropic-ratelimit-.+-reset$/;

/**
 * Parses every retry hint of an error. Delays are measured from `noticeAt`, the notice's own
 * time. `announcedDelayMs` is the delay the source itself announced (Claude `retry_delay_ms`).
 */
export function parseAdvice(error: ErrorReport | null | undefined, noticeAt: number, announcedDelayMs?: number | null): Advice {
  const advice: Advice = { hints: [], authoritative: null, ignored: [] };
  if (announcedDelayMs != null) addDelay(advice, "delayMs", String(announcedDelayMs), announcedDelayMs);
  if (error) {
    const headers = lowerCased(error.headers);
    addRetryAfter(advice, error.retryAfter ?? headers?.["retry-after"] ?? null, noticeAt);
    if (headers) addHeaderHints(advice, headers, noticeAt);
    addTextHints(advice, errorText(error).slice(0, TEXT_PREFIX_CHARS), noticeAt);
    if (error.details !== null && typeof error.details === "object") addDetailHints(advice, error.details, noticeAt, 0);
  }
  for (const hint of advice.hints) {
    if (advice.authoritative === null || hint.delayMs > advice.authoritative.delayMs) advice.authoritative = hint;
  }
  return advice;
}

function addDelay(advice: Advice, source: AdviceSource, value: string, delayMs: number, resetAt?: number) {
  const reason = !Number.isFinite(delayMs)
    ? "not a number"
    : delayMs < 0
      ? "negative"
      : delayMs > MAX_ADVICE_MS
        ? "absurd: more than 7 days"
        : null;
  if (reason !== null) {
    advice.ignored.push({ source, value, reason });
    return;
  }
  const hint: AdviceHint = { source, delayMs: Math.round(delayMs) };
  if (resetAt !== undefined) hint.resetAt = resetAt;
  advice.hints.push(hint);
}

/** A hint given as an instant: valid only if it is not before the notice. */
function addInstant(advice: Advice, source: AdviceSource, value: string, at: number, noticeAt: number) {
  if (!Number.isFinite(at)) advice.ignored.push({ source, value, reason: "not a date" });
  else if (at < noticeAt) advice.ignored.push({ source, value, reason: "in the past" });
  else addDelay(advice, source, value, at - noticeAt, at);
}

function addRetryAfter(advice: Advice, value: string | number | null, noticeAt: number) {
  if (value === null) return;
  if (typeof value === "number") return addDelay(advice, "retry-after", String(value), value * 1000);
  const text = value.slice(0, VALUE_PREFIX_CHARS).trim();
  if (/^[+-]?\d+(?:\.\d+)?$/.test(text)) return addDelay(advice, "retry-after", text, Number(text) * 1000);
  addInstant(advice, "retry-after-date", text, Date.parse(text), noticeAt);
}

function addHeaderHints(advice: Advice, headers: Record<string, string>, noticeAt: number) {
  for (const [name, full] of Object.entries(headers).slice(0, MAX_HEADERS_READ)) {
    const value = full.slice(0, VALUE_PREFIX_CHARS);
    if (name === "retry-after-ms") addDelay(advice, "retry_after_ms", value, Number(value));
    else if (name.startsWith("x-ratelimit-reset")) {
      const delayMs = parseDuration(value);
      if (delayMs === null) advice.ignored.push({ source: "x-ratelimit-reset", value, reason: "not a duration" });
      else addDelay(advice, "x-ratelimit-reset", value, delayMs, noticeAt + Math.round(delayMs));
    } else if (ANTHROPIC_RESET.test(name)) addInstant(advice, "anthropic-reset", value, Date.parse(value), noticeAt);
  }
}

function addTextHints(advice: Advice, text: string, noticeAt: number) {
  if (TRY_AGAIN.test(text)) {
    for (const match of text.matchAll(TRY_AGAIN_IN)) {
      const delayMs = parseDuration(match[1]);
      if (delayMs !== null) addDelay(advice, "message", match[0].trim(), delayMs);
    }
    for (const match of text.matchAll(TRY_AGAIN_AT)) addClockTime(advice, match, noticeAt);
  }
  if (/\breset/i.test(text)) {
    for (const match of text.matchAll(RESETS_AT)) if (match[2] !== undefined || match[3] !== undefined) addClockTime(advice, match, noticeAt);
  }
}

/**
 * "Try again at 5:59 PM" (or "resets 12:28pm (UTC)") names a wall-clock time in the zone of the machine that printed it,
 * which the server cannot know. We read it as UTC on the notice's UTC date: the only zone we
 * can justify, and it is what a server-side agent usually runs in. The text names a minute only:
 * when that minute has begun (a reset seconds away) the reset lies within it, so its end is the
 * time to wait for; a time already passed on that date means the same time tomorrow.
 */
function addClockTime(advice: Advice, match: RegExpMatchArray, noticeAt: number) {
  const value = match[0].trim();
  let hours = Number(match[1]);
  const minutes = Number(match[2] ?? 0);
  const meridiem = match[3]?.toLowerCase();
  if (minutes > 59 || (meridiem ? hours < 1 || hours > 12 : hours > 23)) {
    advice.ignored.push({ source: "usage-limit-text", value, reason: "not a time of day" });
    return;
  }
  if (meridiem) hours = (hours % 12) + (meridiem === "p" ? 12 : 0);
  const day = new Date(noticeAt);
  let at = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), hours, minutes);
  if (at < noticeAt) at += noticeAt - at < MINUTE_MS ? MINUTE_MS : DAY_MS;
  addDelay(advice, "usage-limit-text", value, at - noticeAt, at);
}

/**
 * The window reset the hints name: the latest of them. A wall-clock text knows its minute only,
 * so an exact instant within a minute of it (Codex's `resetsAt`, reported beside its "try again
 * at 9:29 AM", or remembered from the snapshot the source sent just before) is the same reset, to
 * the second, and the text gives way to it.
 */
export function latestReset(hints: AdviceHint[], rememberedReset: number | null = null): number | null {
  const exact = hints.filter(isExactReset).map((hint) => hint.resetAt!);
  if (rememberedReset !== null) exact.push(rememberedReset);
  let latest: number | null = null;
  for (const hint of hints) {
    if (hint.resetAt === undefined) continue;
    const at = hint.source === "usage-limit-text" ? (exact.find((other) => Math.abs(other - hint.resetAt!) < MINUTE_MS) ?? hint.resetAt) : hint.resetAt;
    if (latest === null || at > latest) latest = at;
  }
  return latest;
}

/**
 * Where an exact reset may stand behind a minute-only reset text of `error`: the instants within
 * a minute of the latest such text that are not yet past at `noticeAt`. Null when the error names
 * an exact reset itself, names none, or `remembered` (the thread's remembered reset) already lies
 * in that range. A source may report the exact reset apart from the error (a relay sends Codex's
 * account/rateLimits/updated as a line of its own), so the pipeline looks there and gives what it
 * finds to the event (`windowResetAt`), which latestReset then prefers to the text.
 */
export function minuteOnlyResetRange(error: ErrorReport | null | undefined, noticeAt: number, remembered: number | null = null): { from: number; to: number } | null {
  if (!error) return null;
  const hints = parseAdvice(error, noticeAt).hints;
  if (latestExactReset(hints) !== null) return null;
  let text: number | null = null;
  for (const hint of hints) if (hint.source === "usage-limit-text" && hint.resetAt !== undefined && (text === null || hint.resetAt > text)) text = hint.resetAt;
  if (text === null) return null;
  const range = { from: Math.max(noticeAt, text - MINUTE_MS + 1), to: text + MINUTE_MS - 1 };
  return remembered !== null && remembered >= range.from && remembered <= range.to ? null : range;
}

/** The latest exact window reset the hints name (an instant, never a minute-only text), or null. */
export function latestExactReset(hints: AdviceHint[]): number | null {
  let latest: number | null = null;
  for (const hint of hints) if (isExactReset(hint) && (latest === null || hint.resetAt! > latest)) latest = hint.resetAt!;
  return latest;
}

function isExactReset(hint: AdviceHint): boolean {
  return hint.resetAt !== undefined && hint.source !== "usage-limit-text";
}

/** Field hints anywhere in a kept provider body: retry_after_ms, retry_delay_ms, Codex resetsAt. */
function addDetailHints(advice: Advice, node: object, noticeAt: number, depth: number) {
  if (depth > 4) return;
  const entries = Array.isArray(node) ? node.map((value, i) => [String(i), value] as const) : Object.entries(node);
  for (const [key, value] of entries) {
    if (key === "retry_after_ms" || key === "retryAfterMs") addField(advice, "retry_after_ms", value);
    else if (key === "retry_delay_ms" || key === "retryDelayMs") addField(advice, "retry_delay_ms", value);
    else if (key === "resetsAt" && value !== null) addResetsAt(advice, node, value, noticeAt);
    else if (value !== null && typeof value === "object") addDetailHints(advice, value, noticeAt, depth + 1);
  }
}

function addField(advice: Advice, source: AdviceSource, value: unknown) {
  if (value === null || value === undefined) return;
  addDelay(advice, source, String(value), typeof value === "number" || typeof value === "string" ? Number(value) : NaN);
}

/** Codex `resetsAt` is epoch seconds. A window that is not used up does not block anything. */
function addResetsAt(advice: Advice, window: object, value: unknown, noticeAt: number) {
  const usedPercent = isRecord(window) ? window.usedPercent : undefined;
  if (typeof usedPercent === "number" && usedPercent < 100) {
    advice.ignored.push({ source: "resetsAt", value: String(value), reason: `window not exhausted (${usedPercent} % used)` });
    return;
  }
  addInstant(advice, "resetsAt", String(value), typeof value === "number" ? value * 1000 : NaN, noticeAt);
}

function lowerCased(headers: Record<string, string> | null | undefined): Record<string, string> | null {
  if (!headers) return null;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (typeof value === "string") out[name.toLowerCase()] = value;
  return out;
}
