/**
 * Limit snapshots: how full one usage window of a provider account is, and when it resets, as
 * the agents and the provider's headers report it. Pure, like the adapters: every reader below
 * takes the observation time as an argument. A snapshot never changes a thread's retry state; it
 * travels with its line (NormalizedLine.limits) to the limits store.
 */
import { parseDuration } from "../retry/duration";
import { finiteNum, isObject, nonEmptyStr, str, type JsonObject } from "./util";

/** How a window stands: `warning` as the provider warns (or from WARNING_PERCENT), `rejected` once full. */
export const LIMIT_STATUSES = ["ok", "warning", "rejected"] as const;
export type LimitStatus = (typeof LIMIT_STATUSES)[number];

export function isLimitStatus(value: unknown): value is LimitStatus {
  return (LIMIT_STATUSES as readonly unknown[]).includes(value);
}

/** Used share at which a window without a provider status counts as a warning. */
export const WARNING_PERCENT = 90;

export interface LimitSnapshot {
  /** Account or credential label, when the source says which. */
  account: string | null;
  provider: string;
  /** The window's own name: `five_hour`, `seven_day` (Claude), `primary`, `secondary` (Codex), `requests`, `tokens`… */
  window: string;
  /** 0–100; null when only the status is known. */
  usedPercent: number | null;
  windowMinutes: number | null;
  /** Epoch ms. */
  resetAt: number | null;
  status: LimitStatus;
  observedAt: number;
  /** The agent's thread the snapshot came with, only when one is known. */
  threadId: string | null;
  /** Why the provider refused (Codex `rateLimitReachedType`), when it says. */
  reachedType?: string | null;
}

/** A status from the used share when the source gave none. */
export function statusOfPercent(usedPercent: number | null): LimitStatus {
  if (usedPercent === null) return "ok";
  if (usedPercent >= 100) return "rejected";
  return usedPercent >= WARNING_PERCENT ? "warning" : "ok";
}

/** A 0–1 fraction as a percentage, without binary noise (0.92 → 92). */
function percentOfFraction(fraction: number | null): number | null {
  return fraction === null ? null : Math.round(fraction * 10_000) / 100;
}

/** Providers' headers and fractions can overshoot (remaining above the limit, 1.02 utilisation): shown as 0–100. */
function clampPercent(value: number | null): number | null {
  return value === null ? null : Math.min(100, Math.max(0, value));
}

/** Epoch seconds (as providers send reset times) → epoch ms. */
function epochSeconds(value: unknown): number | null {
  const n = numberOf(value);
  return n === null ? null : n * 1000;
}

function numberOf(value: unknown): number | null {
  return finiteNum(typeof value === "string" && value.trim() !== "" ? Number(value) : value);
}

// ---------------------------------------------------------------------------------------------
// Codex: `account/rateLimits/updated` (camelCase) and the session file's `token_count` (snake_case)

export const CODEX_LIMIT_PROVIDER = "openai";
const CODEX_WINDOWS = ["primary", "secondary"] as const;

/**
 * A Codex rate-limit snapshot (`params.rateLimits` of the notification, the `rateLimits` of the
 * `account/rateLimits/read` answer, or a session file's `rate_limits`): one snapshot per window.
 * Windows of another limit family than `codex` are named after it (`<limitId>/primary`).
 */
export function codexLimitSnapshots(limits: unknown, observedAt: number, threadId: string | null): LimitSnapshot[] {
  if (!isObject(limits)) return [];
  const limitId = nonEmptyStr(limits.limitId) ?? nonEmptyStr(limits.limit_id);
  const reached = nonEmptyStr(limits.rateLimitReachedType) ?? nonEmptyStr(limits.rate_limit_reached_type);
  const account = nonEmptyStr(limits.planType) ?? nonEmptyStr(limits.plan_type);
  const out: LimitSnapshot[] = [];
  for (const name of CODEX_WINDOWS) {
    const w = limits[name];
    if (!isObject(w)) continue;
    const usedPercent = clampPercent(numberOf(w.usedPercent ?? w.used_percent));
    const resetAt = epochSeconds(w.resetsAt ?? w.resets_at);
    if (usedPercent === null && resetAt === null) continue;
    const windowMinutes = numberOf(w.windowDurationMins ?? w.window_minutes);
    const status = statusOfPercent(usedPercent);
    out.push({
      account,
      provider: CODEX_LIMIT_PROVIDER,
      window: limitId && limitId !== "codex" ? `${limitId}/${name}` : name,
      usedPercent,
      windowMinutes,
      resetAt,
      status,
      observedAt,
      threadId,
      reachedType: status === "rejected" ? reached : null,
    });
  }
  return out;
}

/** A session-file line `{type:"event_msg", payload:{type:"token_count", rate_limits}}`, else []. */
export function codexSessionLimitSnapshots(msg: JsonObject, observedAt: number, threadId: string | null): LimitSnapshot[] {
  const payload = isObject(msg.payload) ? msg.payload : null;
  if (msg.type !== "event_msg" || !payload || payload.type !== "token_count") return [];
  return codexLimitSnapshots(payload.rate_limits, observedAt, threadId);
}

// ---------------------------------------------------------------------------------------------
// Claude Code: `rate_limit_event`

export const CLAUDE_LIMIT_STATUS: Record<string, LimitStatus> = { allowed: "ok", allowed_warning: "warning", rejected: "rejected" };

/** Claude's window names and lengths (its `rateLimitType` and the unified headers' short names). */
const CLAUDE_WINDOW_MINUTES: Record<string, number> = { five_hour: 300, seven_day: 10_080 };
const UNIFIED_WINDOWS: Record<string, string> = { "5h": "five_hour", "7d": "seven_day" };

/**
 * `rate_limit_info` of a stream-json `rate_limit_event`. `resetsAt` is epoch seconds and
 * `utilization` a fraction; a rejected window without utilisation is full. An event without a
 * window (a plain 429 that is not a usage limit) is no snapshot.
 */
export function claudeLimitSnapshots(info: unknown, provider: string, observedAt: number, threadId: string | null): LimitSnapshot[] {
  if (!isObject(info)) return [];
  const window = nonEmptyStr(info.rateLimitType);
  if (!window) return [];
  const status = CLAUDE_LIMIT_STATUS[str(info.status) ?? ""] ?? "ok";
  const usedPercent = clampPercent(percentOfFraction(numberOf(info.utilization))) ?? (status === "rejected" ? 100 : null);
  return [
    {
      account: null,
      provider,
      window,
      usedPercent,
      windowMinutes: CLAUDE_WINDOW_MINUTES[window] ?? null,
      resetAt: epochSeconds(info.resetsAt),
      status,
      observedAt,
      threadId,
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Provider headers seen by a relay or a proxy

/** A reset header's value: epoch seconds, an ISO-8601 time, or a duration from now ("6m0s"). */
function resetOfHeader(value: string | undefined, observedAt: number): number | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d{9,}(?:\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  if (/^\d{4}-\d\d-\d\dT/.test(trimmed)) {
    const t = Date.parse(trimmed);
    return Number.isNaN(t) ? null : t;
  }
  const ms = parseDuration(trimmed);
  return ms === null ? null : observedAt + ms;
}

/**
 * Windows named by response headers (lower-cased names): Anthropic's unified windows
 * (`anthropic-ratelimit-unified-5h-*`), Codex's (`x-codex-primary-*`), and the per-minute
 * `requests`/`tokens` buckets (`x-ratelimit-*`, `anthropic-ratelimit-*`) as used shares of
 * their limit.
 */
export function headerLimitSnapshots(
  headers: Record<string, string>,
  provider: string,
  observedAt: number,
  threadId: string | null,
): LimitSnapshot[] {
  const out: LimitSnapshot[] = [];
  const at = { observedAt, threadId };

  for (const [short, window] of Object.entries(UNIFIED_WINDOWS)) {
    const prefix = `anthropic-ratelimit-unified-${short}-`;
    const utilization = numberOf(headers[`${prefix}utilization`]);
    const resetAt = resetOfHeader(headers[`${prefix}reset`], observedAt);
    if (utilization === null && resetAt === null) continue;
    const usedPercent = clampPercent(percentOfFraction(utilization));
    const status = CLAUDE_LIMIT_STATUS[headers[`${prefix}status`] ?? ""] ?? statusOfPercent(usedPercent);
    out.push({ account: null, provider, window, usedPercent, windowMinutes: CLAUDE_WINDOW_MINUTES[window], resetAt, status, ...at });
  }

  const codex: JsonObject = {};
  for (const name of CODEX_WINDOWS) {
    const prefix = `x-codex-${name}-`;
    if (![`${prefix}used-percent`, `${prefix}reset-at`].some((h) => h in headers)) continue;
    codex[name] = {
      usedPercent: headers[`${prefix}used-percent`],
      windowDurationMins: headers[`${prefix}window-minutes`],
      resetsAt: headers[`${prefix}reset-at`],
    };
  }
  if (Object.keys(codex).length) {
    codex.rateLimitReachedType = headers["x-codex-rate-limit-reached-type"] ?? null;
    codex.planType = headers["x-codex-plan-type"] ?? null;
    out.push(...codexLimitSnapshots(codex, observedAt, threadId));
  }

  for (const prefix of ["x-ratelimit-", "anthropic-ratelimit-"]) {
    for (const bucket of ["requests", "tokens"]) {
      const name = (part: string) => (prefix === "x-ratelimit-" ? `${prefix}${part}-${bucket}` : `${prefix}${bucket}-${part}`);
      const limit = numberOf(headers[name("limit")]);
      const remaining = numberOf(headers[name("remaining")]);
      if (limit === null || remaining === null || limit <= 0) continue;
      const usedPercent = clampPercent(percentOfFraction((limit - remaining) / limit));
      const resetAt = resetOfHeader(headers[name("reset")], observedAt);
      out.push({ account: null, provider, window: bucket, usedPercent, windowMinutes: null, resetAt, status: statusOfPercent(usedPercent), ...at });
    }
  }
  return out;
}
