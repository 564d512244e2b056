/**
 * Claude Code's OpenTelemetry records → RadarEvents (service.name "claude-code").
 *
 * Thread = `session.id`; turn = `prompt.id` (every log record carries both). Claude logs no failed
 * attempt that was retried, and nothing marks the end of a prompt, so:
 * - claude_code.user_prompt → turn.started.
 * - claude_code.api_request (a request that succeeded) → turn.completed. A later request of the
 *   same prompt (tool use) arrives after its turn ended: kept, changes nothing.
 * - claude_code.api_error (logged at give-up; `attempt` = calls made, the first included) → the
 *   give-up notice: retry willRetry:false with status, the provider's message and that count.
 * - claude_code.api_retries_exhausted → turn.failed with `total_attempts` (the episode's calls)
 *   and `total_retry_duration_ms` (the episode's reported retry time).
 * - span claude_code.llm_request (enhanced telemetry traces): its `gen_ai.request.attempt` events
 *   mark when each attempt started, so attempt a ≥ 2 gives retry a−1 noticed when attempt a−1
 *   started and started when attempt a did: the real gaps. The events carry no status; a
 *   failed span's status code is the retries'.
 * Everything else is ignored. agent "claude-code", provider "anthropic".
 */
import { CLAUDE_AGENT, CLAUDE_PROVIDER } from "./claude";
import { intOf, type OtlpAgent, type OtlpOutput, type OtlpRecord } from "./otlp-record";
import type { ErrorReport } from "../retry/types";
import type { NormalizedEvent } from "./types";
import { httpStatusOf, nonEmptyStr } from "./util";

const PREFIX = "claude_code.";

function base(r: OtlpRecord, type: NormalizedEvent["type"], threadId: string, at: number): NormalizedEvent {
  const e: NormalizedEvent = { type, at, threadId, agent: CLAUDE_AGENT, provider: CLAUDE_PROVIDER };
  const turnId = nonEmptyStr(r.attrs["prompt.id"]);
  if (turnId) e.turnId = turnId;
  const model = nonEmptyStr(r.attrs.model);
  if (model) e.model = model;
  return e;
}

function fullName(name: string | null): string | null {
  return name === null || name.startsWith(PREFIX) ? name : PREFIX + name;
}

function readLog(r: OtlpRecord, receivedAt: number): OtlpOutput {
  const name = fullName(r.name);
  const nativeType = name;
  if (name !== "claude_code.user_prompt" && name !== "claude_code.api_request" && name !== "claude_code.api_error" && name !== "claude_code.api_retries_exhausted") {
    return { index: r.index, events: [], nativeType };
  }
  const threadId = nonEmptyStr(r.attrs["session.id"]);
  if (!threadId) return { index: r.index, error: `${name}: attribute session.id is required` };
  const at = r.at ?? receivedAt;
  const status = httpStatusOf(intOf(r.attrs.status_code));
  const message = nonEmptyStr(r.attrs.error);
  switch (name) {
    case "claude_code.user_prompt":
      return { index: r.index, events: [base(r, "turn.started", threadId, at)], nativeType };
    case "claude_code.api_request":
      return { index: r.index, events: [base(r, "turn.completed", threadId, at)], nativeType };
    case "claude_code.api_error": {
      const e = base(r, "retry", threadId, at);
      e.willRetry = false;
      const attempts = intOf(r.attrs.attempt);
      if (attempts !== null && attempts >= 1) {
        e.attempt = attempts - 1;
        e.attemptsMade = attempts;
      }
      e.error = { httpStatus: status, message, details: { attempts, requestId: r.attrs.request_id ?? null, durationMs: intOf(r.attrs.duration_ms) } };
      return { index: r.index, events: [e], nativeType };
    }
    default: {
      const e = base(r, "turn.failed", threadId, at);
      const attempts = intOf(r.attrs.total_attempts);
      if (attempts !== null && attempts >= 1) {
        e.attempt = attempts - 1;
        e.attemptsMade = attempts;
      }
      const retryMs = intOf(r.attrs.total_retry_duration_ms);
      if (retryMs !== null && retryMs >= 0) e.retryMs = retryMs;
      e.error = { httpStatus: status, message, details: { totalAttempts: attempts, totalRetryDurationMs: retryMs } };
      return { index: r.index, events: [e], nativeType };
    }
  }
}

function readSpan(r: OtlpRecord): OtlpOutput {
  const nativeType = r.name;
  if (r.name !== "claude_code.llm_request") return { index: r.index, events: [], nativeType };
  const threadId = nonEmptyStr(r.attrs["session.id"]);
  if (!threadId) return { index: r.index, error: `${r.name}: attribute session.id is required` };
  const starts = r.events
    .filter((e) => e.name === "gen_ai.request.attempt" && e.at !== null && intOf(e.attrs.attempt) !== null)
    .map((e) => ({ n: intOf(e.attrs.attempt)!, at: e.at! }))
    .sort((a, b) => a.n - b.n);
  const failed = r.attrs.success === false || r.status?.code === 2;
  const error: ErrorReport | null = failed ? { httpStatus: httpStatusOf(intOf(r.attrs.status_code)), message: nonEmptyStr(r.attrs.error) ?? r.status?.message ?? null } : null;
  const events: NormalizedEvent[] = [];
  for (let i = 1; i < starts.length; i++) {
    const n = starts[i].n - 1;
    const notice = base(r, "retry", threadId, starts[i - 1].at);
    notice.attempt = n;
    notice.willRetry = true;
    if (error) notice.error = { ...error };
    const started = base(r, "attempt", threadId, starts[i].at);
    started.attempt = n;
    events.push(notice, started);
  }
  return { index: r.index, events, nativeType };
}

export const claudeOtlp: OtlpAgent = {
  matches: (service) => service === CLAUDE_AGENT,
  read: (records, receivedAt) => records.map((r) => (r.signal === "logs" ? readLog(r, receivedAt) : readSpan(r))),
};
