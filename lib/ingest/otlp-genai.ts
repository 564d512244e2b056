/**
 * Spans of any agent instrumented with the OpenTelemetry GenAI semantic conventions → RadarEvents:
 * a team's own agent built on an instrumented SDK, beside Codex and Claude Code.
 *
 * A GenAI span (one with `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.system` or
 * `gen_ai.request.model`) is one call to a model. Its thread is `gen_ai.conversation.id`, else its
 * trace; its agent the resource's `service.name`; provider and model from `gen_ai.*`.
 * - a call → attempt at the span's start. When it failed (span status ERROR, `error.type`, an HTTP
 *   status ≥ 400, or a `gen_ai.client.operation.exception` / `exception` event), with its error
 *   (the status from `http.response.status_code`, else an `error.type` that is one, the message
 *   from the status or the exception) and its end: the engine takes failed calls followed by
 *   another as retries of one request.
 * - a call that succeeded → also progress at its end: a retrying episode has recovered.
 * Other spans and log records are ignored. The conventions mark no turn: a thread's turn is the
 * one its first event opens.
 */
import { intOf, type Attrs, type OtlpAgent, type OtlpOutput, type OtlpRecord } from "./otlp-record";
import type { ErrorReport } from "../retry/types";
import type { NormalizedEvent } from "./types";
import { httpStatusOf, nonEmptyStr } from "./util";

const EXCEPTION_EVENTS = new Set(["gen_ai.client.operation.exception", "exception"]);
/** OpenTelemetry's StatusCode.ERROR. */
const STATUS_ERROR = 2;

/** Whether a record is a GenAI call span (what this reader reads). */
export function isGenAiSpan(r: OtlpRecord): boolean {
  return r.signal === "traces" && ["gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.system", "gen_ai.request.model"].some((k) => nonEmptyStr(r.attrs[k]) !== null);
}

function failureOf(r: OtlpRecord): ErrorReport | null {
  const exception = r.events.find((e) => e.name !== null && EXCEPTION_EVENTS.has(e.name))?.attrs ?? null;
  const errorType = nonEmptyStr(r.attrs["error.type"]) ?? nonEmptyStr(exception?.["error.type"]) ?? nonEmptyStr(exception?.["exception.type"]);
  const httpStatus = httpStatusOf(intOf(r.attrs["http.response.status_code"]) ?? intOf(exception?.["http.response.status_code"]) ?? intOf(errorType));
  const failed = r.status?.code === STATUS_ERROR || errorType !== null || exception !== null || (httpStatus !== null && httpStatus >= 400);
  if (!failed) return null;
  const message = r.status?.message ?? nonEmptyStr(exception?.["exception.message"]) ?? errorType;
  const error: ErrorReport = { httpStatus, message };
  if (errorType !== null && intOf(errorType) === null) error.code = errorType;
  return error;
}

function read(r: OtlpRecord): OtlpOutput {
  if (!isGenAiSpan(r)) return { index: r.index, events: [], nativeType: r.name };
  const attrs: Attrs = r.attrs;
  const threadId = nonEmptyStr(attrs["gen_ai.conversation.id"]) ?? r.traceId;
  if (!threadId) return { index: r.index, error: `${r.name ?? "span"}: gen_ai.conversation.id or a trace id is required` };
  const start = r.startAt ?? r.at;
  if (start === null) return { index: r.index, error: `${r.name ?? "span"}: startTimeUnixNano is required` };
  const end = Math.max(start, r.at ?? start);
  const common = (type: NormalizedEvent["type"], at: number): NormalizedEvent => {
    const e: NormalizedEvent = { type, at, threadId };
    if (r.service) e.agent = r.service;
    const provider = nonEmptyStr(attrs["gen_ai.provider.name"]) ?? nonEmptyStr(attrs["gen_ai.system"]);
    if (provider) e.provider = provider;
    const model = nonEmptyStr(attrs["gen_ai.response.model"]) ?? nonEmptyStr(attrs["gen_ai.request.model"]);
    if (model) e.model = model;
    return e;
  };
  const call = common("attempt", start);
  const error = failureOf(r);
  if (error) {
    call.error = error;
    call.endedAt = end;
    return { index: r.index, events: [call], nativeType: r.name };
  }
  const answered = common("progress", end);
  answered.progressCount = 1;
  answered.lastAt = end;
  return { index: r.index, events: [call, answered], nativeType: r.name };
}

export const genAiOtlp: OtlpAgent = {
  // Any other service: only its GenAI spans mean something (see isGenAiSpan).
  matches: () => true,
  read: (records) => records.map(read),
};
