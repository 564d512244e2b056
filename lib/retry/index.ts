/** Retry Radar's engine: pure, clock passed in. Every screen is a projection of ThreadState. */
export { classify, isRetryableKind, errorText, type Classification } from "./classify";
export { parseAdvice, minuteOnlyResetRange, MAX_ADVICE_MS, type Advice, type IgnoredAdvice } from "./advice";
export { parseDuration, noteDuration, clockDuration, humanDuration, compactDuration } from "./duration";
export {
  PRESETS,
  PRESET_NAMES,
  DEFAULT_GRACE_MS,
  defaultPolicyFor,
  resolvePolicy,
  validatePolicy,
  baseDelayMs,
  expectedWindow,
  drawDelayMs,
  isOverCap,
  isPresetName,
  preset,
  type PresetName,
  type PolicyCheck,
  type ExpectedWindow,
  type AdviceInput,
} from "./policies";
export { initialThreadState, reduce, tick, tickOnTime, replay, viewStatus, STOP_GRACE_MS, MAX_ATTEMPT_RECORDS } from "./reducer";
export { seededRandom } from "./random";
export { parseReconnectNotice, type ReconnectNotice } from "./notice";
export * from "./types";
export {
  advanceIncidents,
  detectIncidents,
  incidentId,
  incidentTimeLostMs,
  scopeKey,
  scopeOf,
  DEFAULT_INCIDENT_SETTINGS,
  type IncidentInput,
  type IncidentNotice,
  type IncidentRecord,
  type IncidentSettings,
  type IncidentSettingsBySource,
  type IncidentThread,
  type SourceIncidentSettings,
} from "./incidents";
