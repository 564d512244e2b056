import { MAX_ADVICE_MS } from "./advice";
import { TROUBLE_KINDS, isTroubleKind, type PolicyDefinition, type PolicyRef, type TroubleKind } from "./types";

/** Grace after the latest expected attempt when no policy names one (a source's own advice). */
export const DEFAULT_GRACE_MS = 60_000;

/** The presets, with the numbers of the README's Policies table (policies.test.ts pins them). */
export const PRESETS = {
  /** A Codex 429 either shows progress or ends; long advice fails at once. */
  "codex-429-stall-bound": {
    name: "codex-429-stall-bound",
    kinds: ["rate_limit"],
    maxAttempts: 5,
    baseDelayMs: 5_000,
    factor: 2,
    maxDelayMs: 300_000,
    jitterMin: 0,
    jitterMax: 0,
    adviceCapMs: 300_000,
    graceMs: 60_000,
  },
  /** Codex core: patient capacity retries, at least 30 s, 2 min, 5 min, each + 0–100 % jitter. */
  "codex-capacity": {
    name: "codex-capacity",
    kinds: ["capacity"],
    maxAttempts: 3,
    baseDelayMs: 30_000,
    factor: 1,
    maxDelayMs: 300_000,
    scheduleMs: [30_000, 120_000, 300_000],
    jitterMin: 0,
    jitterMax: 1,
    adviceCapMs: null,
    graceMs: 60_000,
  },
  /** Recipe runner: 1 + 5 executions, min(60 s·2^(n−1), 600 s). The grace is ours: 60 s, as elsewhere. */
  "recipe-runner": {
    name: "recipe-runner",
    kinds: ["rate_limit"],
    maxAttempts: 5,
    baseDelayMs: 60_000,
    factor: 2,
    maxDelayMs: 600_000,
    jitterMin: 0,
    jitterMax: 0,
    adviceCapMs: null,
    graceMs: 60_000,
  },
  /** Up to 3 promptless continuations at ~1, 4, 15 min, each 50–100 % of base. */
  "capacity-recovery": {
    name: "capacity-recovery",
    kinds: ["capacity"],
    maxAttempts: 3,
    baseDelayMs: 60_000,
    factor: 1,
    maxDelayMs: 900_000,
    scheduleMs: [60_000, 240_000, 900_000],
    jitterMin: -0.5,
    jitterMax: 0,
    adviceCapMs: null,
    graceMs: null,
    continuation: true,
  },
  /**
   * Codex's own transport backoff: 200 ms·2^(n−1) ±10 %. The table gives no cap; 300 s (as the
   * stall bound's) only matters past the 5th retry, which the bound forbids anyway.
   */
  "codex-native": {
    name: "codex-native",
    kinds: ["transport"],
    maxAttempts: 5,
    baseDelayMs: 200,
    factor: 2,
    maxDelayMs: 300_000,
    jitterMin: -0.1,
    jitterMax: 0.1,
    adviceCapMs: null,
    graceMs: 60_000,
  },
} as const satisfies Record<string, PolicyDefinition>;

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

/** The policy in force when none is named. Usage limits wait for their reset, bounded by no count. */
const DEFAULT_FOR_KIND: Partial<Record<TroubleKind, PresetName>> = {
  rate_limit: "codex-429-stall-bound",
  capacity: "codex-capacity",
  transport: "codex-native",
};

export function defaultPolicyFor(kind: TroubleKind): PolicyDefinition | null {
  const name = DEFAULT_FOR_KIND[kind];
  return name ? preset(name) : null;
}

export function preset(name: PresetName): PolicyDefinition {
  return PRESETS[name] as PolicyDefinition;
}

export function isPresetName(name: string): name is PresetName {
  return Object.hasOwn(PRESETS, name);
}

/** A preset by name or a valid custom definition; null when unknown or invalid. */
export function resolvePolicy(ref: PolicyRef | null | undefined): PolicyDefinition | null {
  if (ref == null) return null;
  if (typeof ref === "string") return isPresetName(ref) ? preset(ref) : null;
  const checked = validatePolicy(ref);
  return checked.ok ? checked.policy : null;
}

const MAX_ATTEMPTS_LIMIT = 1_000;
const MAX_FACTOR = 100;

export type PolicyCheck = { ok: true; policy: PolicyDefinition } | { ok: false; errors: string[] };

/** Checks a custom policy; every problem is named with its field. */
export function validatePolicy(input: unknown): PolicyCheck {
  const errors: string[] = [];
  if (typeof input !== "object" || input === null || Array.isArray(input)) return { ok: false, errors: ["policy: expected an object"] };
  const p = input as Record<string, unknown>;
  const duration = (field: string, nullable: boolean) => {
    const value = p[field];
    if (value === null && nullable) return;
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > MAX_ADVICE_MS) {
      errors.push(`${field}: expected milliseconds between 0 and ${MAX_ADVICE_MS} (7 days)${nullable ? " or null" : ""}`);
    }
  };

  if (typeof p.name !== "string" || !/^[a-z0-9][a-z0-9._-]{0,63}$/i.test(p.name)) {
    errors.push("name: expected 1–64 letters, digits, '.', '_' or '-'");
  } else if (isPresetName(p.name)) errors.push(`name: "${p.name}" is a preset; give a custom policy its own name`);
  if (!Array.isArray(p.kinds) || p.kinds.length === 0 || p.kinds.some((k) => !isTroubleKind(k))) {
    errors.push(`kinds: expected a non-empty list of ${TROUBLE_KINDS.join(", ")}`);
  }
  if (p.maxAttempts !== null && !(Number.isInteger(p.maxAttempts) && (p.maxAttempts as number) >= 1 && (p.maxAttempts as number) <= MAX_ATTEMPTS_LIMIT)) {
    errors.push(`maxAttempts: expected an integer from 1 to ${MAX_ATTEMPTS_LIMIT}, or null for unlimited`);
  }
  duration("baseDelayMs", false);
  duration("maxDelayMs", false);
  if (typeof p.factor !== "number" || !Number.isFinite(p.factor) || p.factor < 1 || p.factor > MAX_FACTOR) {
    errors.push(`factor: expected a number from 1 to ${MAX_FACTOR}`);
  }
  if (typeof p.baseDelayMs === "number" && typeof p.maxDelayMs === "number" && p.maxDelayMs < p.baseDelayMs) {
    errors.push("maxDelayMs: must not be below baseDelayMs");
  }
  if (p.scheduleMs !== undefined) {
    const s = p.scheduleMs;
    if (!Array.isArray(s) || s.length === 0 || s.some((v) => typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > MAX_ADVICE_MS)) {
      errors.push("scheduleMs: expected a non-empty list of milliseconds between 0 and 7 days");
    }
  }
  const jitterOk = (v: unknown) => typeof v === "number" && Number.isFinite(v) && v >= -1 && v <= 10;
  if (!jitterOk(p.jitterMin)) errors.push("jitterMin: expected a fraction from -1 to 10");
  if (!jitterOk(p.jitterMax)) errors.push("jitterMax: expected a fraction from -1 to 10");
  if (jitterOk(p.jitterMin) && jitterOk(p.jitterMax) && (p.jitterMax as number) < (p.jitterMin as number)) {
    errors.push("jitterMax: must not be below jitterMin");
  }
  duration("adviceCapMs", true);
  duration("graceMs", true);
  if (p.continuation !== undefined && typeof p.continuation !== "boolean") errors.push("continuation: expected true or false");
  if (errors.length > 0) return { ok: false, errors };

  const policy: PolicyDefinition = {
    name: p.name as string,
    kinds: [...new Set(p.kinds as TroubleKind[])],
    maxAttempts: p.maxAttempts as number | null,
    baseDelayMs: p.baseDelayMs as number,
    factor: p.factor as number,
    maxDelayMs: p.maxDelayMs as number,
    jitterMin: p.jitterMin as number,
    jitterMax: p.jitterMax as number,
    adviceCapMs: p.adviceCapMs as number | null,
    graceMs: p.graceMs as number | null,
  };
  if (p.scheduleMs !== undefined) policy.scheduleMs = [...(p.scheduleMs as number[])];
  if (p.continuation !== undefined) policy.continuation = p.continuation as boolean;
  return { ok: true, policy };
}

/**
 * The policy's delay before retry n (n ≥ 1, the retry index): the explicit schedule (its last
 * entry repeats), else base·factor^(n−1) capped at maxDelayMs. Saturates: never Infinity or NaN.
 */
export function baseDelayMs(policy: PolicyDefinition, n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`retry index must be an integer ≥ 1, got ${n}`);
  const schedule = policy.scheduleMs;
  if (schedule && schedule.length > 0) return schedule[Math.min(n, schedule.length) - 1];
  if (policy.baseDelayMs === 0) return 0;
  const raw = policy.baseDelayMs * Math.pow(policy.factor, n - 1);
  return raw < policy.maxDelayMs ? raw : policy.maxDelayMs;
}

export interface ExpectedWindow {
  /** Earliest the next attempt may come (what the UI shows as expected), from the notice. */
  earliestMs: number;
  /** Latest it may come. */
  latestMs: number;
  /** latestMs + grace; null when there is no deadline. */
  deadlineMs: number | null;
  /** True unless the source itself announced the delay. */
  estimated: boolean;
}

export interface AdviceInput {
  delayMs: number;
  /** The source announced this delay itself (Claude retry_delay_ms): it is what will happen. */
  exact?: boolean;
}

/**
 * When retry n should come after its notice. An exact source delay is taken as is. Provider
 * advice replaces the policy's backoff, except that an explicit schedule is a floor ("at
 * least 30 s"). Without advice, the policy's delay with its jitter range.
 * Null when there is neither a policy nor advice: nothing to expect.
 */
export function expectedWindow(policy: PolicyDefinition | null, n: number, advice: AdviceInput | null): ExpectedWindow | null {
  const grace = policy ? policy.graceMs : DEFAULT_GRACE_MS;
  if (advice?.exact) return window(advice.delayMs, advice.delayMs, grace, false);
  if (!policy) return advice ? window(advice.delayMs, advice.delayMs, grace, true) : null;
  if (advice && !policy.scheduleMs) return window(advice.delayMs, advice.delayMs, grace, true);
  const [low, high] = jitterRange(policy, n);
  return advice ? window(Math.max(advice.delayMs, low), Math.max(advice.delayMs, high), grace, true) : window(low, high, grace, true);
}

function window(earliestMs: number, latestMs: number, graceMs: number | null, estimated: boolean): ExpectedWindow {
  return { earliestMs, latestMs, deadlineMs: graceMs === null ? null : latestMs + graceMs, estimated };
}

/** A delay drawn in [low, high) of the policy's jitter range, for waits we schedule ourselves (recovery). */
export function drawDelayMs(policy: PolicyDefinition, n: number, random: () => number): number {
  const [low, high] = jitterRange(policy, n);
  return low + Math.floor((high - low) * random());
}

/** Advice above the policy's cap fails the episode at once (codex-429-stall-bound). */
export function isOverCap(policy: PolicyDefinition, delayMs: number): boolean {
  return policy.adviceCapMs !== null && delayMs > policy.adviceCapMs;
}

function jitterRange(policy: PolicyDefinition, n: number): [number, number] {
  const base = baseDelayMs(policy, n);
  return [Math.round(base * (1 + policy.jitterMin)), Math.round(base * (1 + policy.jitterMax))];
}
