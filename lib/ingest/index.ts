/** The normalize stage: native and canonical ingestion formats → RadarEvents (pure). */
export * from "./types";
export { normalizeBatch, normalizeCanonicalBatch, withoutIgnored } from "./batch";
export { normalizeCanonical, canonicalEventSchema, canonicalErrorSchema, type CanonicalEventInput, type CanonicalResult } from "./canonical";
export { normalizeCodexAppServer, codexAppServerAdapter, codexTurnError, isCodexProgressMethod, CODEX_AGENT } from "./codex-app-server";
export { normalizeCodexExec, codexExecAdapter, execTurnId, CODEX_EXEC_AGENT, CODEX_EXEC_PROVIDER } from "./codex-exec";
export { normalizeClaude, claudeAdapter, CLAUDE_AGENT, CLAUDE_PROVIDER } from "./claude";
export { parseBody, BodyParseError, TooManyItemsError, type ParsedBody } from "./body";
export { parseCapture, CaptureParseError, type ParsedCapture, type CaptureItem, type CaptureFormat } from "./capture";
export { parseEventTime, MIN_EVENT_TIME, MAX_FUTURE_MS } from "./time";
export { deriveKey, keyMaterial, stableJson } from "./key";
export { codexErrorInfoParts } from "./codex-error";
export { InvalidLine, unwrap } from "./native";
export { MASK, isCredentialName, maskCredential, maskEvent, maskPayload, maskText } from "./mask";
