/**
 * Codex's OpenTelemetry records → RadarEvents (service.name "codex_exec", "codex-app-server", …).
 *
 * Thread = `conversation.id`. Log records carry `timeUnixNano` "0" (their time is
 * `event.timestamp`), a null body (the name is the `event.name` attribute) and integers as strings.
 * - codex.conversation_starts → thread.started (provider_name, model).
 * - codex.user_prompt → turn.started.
 * - codex.api_request (one per HTTP call) → attempt, dated when the call started (its time less
 *   `duration_ms`), with its status and, when it failed, its end: a call after a retry notice
 *   starts that retry, and a failed call followed by another is a retry even when the notice
 *   (a trace) never arrives (the engine derives it; a `codex exec` that fails never flushes its
 *   traces). Its `attempt` attribute does not count stream retries, so it is not the retry index.
 * - codex.sse_event → progress, unless it reports a failure (`error.message`, `response.failed`):
 *   ignored. (No capture holds one; `codex.websocket_*` records, of the websocket transport, are
 *   ignored like every other record.)
 * Traces (exported at the end of a turn, or about every 10 s):
 * - span event codex.retry → the retry notice: `retry.attempt`, the exact `retry.delay_ms`, and the
 *   status of the call it follows (the trace's latest codex.api_request span event before it, else
 *   its next failed one when the call was exported earlier).
 * - span event codex.turn_profile → the turn's end: turn.completed when the trace's last call
 *   succeeded, turn.failed with that call's status when it failed (Codex marks no failed turn
 *   otherwise); `sampling_retry_count` goes into the failure's details. When the trace's calls
 *   went in another export, turn.completed with lastCallDecides: the engine ends the turn as its
 *   last call (a codex.api_request log) did.
 * A span's thread is its own `conversation.id` (`thread.id` on session_task.turn), else the
 * `conversation.id` found anywhere in its trace within the request; a notice exported with no span
 * naming its conversation is ignored, and the engine derives that retry from the calls' logs. A
 * notice whose call went in another export carries no status: the engine takes the failed call's.
 * Span events that repeat log records are ignored, like every other record.
 */
import { CODEX_AGENT } from "./codex-app-server";
import { CODEX_EXEC_AGENT } from "./codex-exec";
import { intOf, type OtlpAgent, type OtlpOutput, type OtlpRecord } from "./otlp-record";
import type { NormalizedEvent } from "./types";
import { httpStatusOf, nonEmptyStr } from "./util";

interface Call {
  at: number;
  httpStatus: number | null;
  message: string | null;
}

const agentOf = (r: OtlpRecord) => (r.service === "codex_exec" ? CODEX_EXEC_AGENT : CODEX_AGENT);

function base(r: OtlpRecord, type: NormalizedEvent["type"], threadId: string, at: number, attrs = r.attrs): NormalizedEvent {
  const e: NormalizedEvent = { type, at, threadId, agent: agentOf(r) };
  const model = nonEmptyStr(attrs.model);
  if (model) e.model = model;
  return e;
}

function readLog(r: OtlpRecord, receivedAt: number): OtlpOutput {
  const name = r.name;
  const known = name === "codex.conversation_starts" || name === "codex.user_prompt" || name === "codex.api_request" || name === "codex.sse_event";
  if (!known) return { index: r.index, events: [], nativeType: name };
  const threadId = nonEmptyStr(r.attrs["conversation.id"]);
  if (!threadId) return { index: r.index, error: `${name}: attribute conversation.id is required` };
  const at = r.at ?? receivedAt;
  switch (name) {
    case "codex.conversation_starts": {
      const e = base(r, "thread.started", threadId, at);
      const provider = nonEmptyStr(r.attrs.provider_name);
      if (provider) e.provider = provider;
      return { index: r.index, events: [e], nativeType: name };
    }
    case "codex.user_prompt":
      return { index: r.index, events: [base(r, "turn.started", threadId, at)], nativeType: name };
    case "codex.api_request": {
      const duration = intOf(r.attrs.duration_ms);
      const e = base(r, "attempt", threadId, duration !== null && duration >= 0 ? at - duration : at);
      const httpStatus = httpStatusOf(intOf(r.attrs["http.response.status_code"]));
      if (httpStatus !== null && httpStatus >= 400) {
        e.error = { httpStatus, message: nonEmptyStr(r.attrs["error.message"]) };
        e.endedAt = at;
      }
      return { index: r.index, events: [e], nativeType: name };
    }
    default: {
      // A failed stream event is no progress (it must not end an episode as recovered); Codex
      // logs its failure as a failed call anyway.
      const kind = String(r.attrs["event.kind"] ?? "");
      if (nonEmptyStr(r.attrs["error.message"]) || r.attrs.success === false || kind === "response.failed" || kind === "error") {
        return { index: r.index, events: [], nativeType: `${name}/${kind}` };
      }
      const e = base(r, "progress", threadId, at);
      e.progressCount = 1;
      e.lastAt = at;
      return { index: r.index, events: [e], nativeType: `${name}/${String(r.attrs["event.kind"] ?? "")}` };
    }
  }
}

/** Per trace in this request: its thread and its calls (codex.api_request span events) in time order. */
function traceFacts(records: OtlpRecord[]) {
  const threads = new Map<string, string>();
  const calls = new Map<string, Call[]>();
  for (const r of records) {
    if (r.signal !== "traces" || !r.traceId) continue;
    const thread = nonEmptyStr(r.attrs["conversation.id"]) ?? (r.name === "session_task.turn" ? nonEmptyStr(r.attrs["thread.id"]) : null);
    if (thread) threads.set(r.traceId, thread);
    for (const e of r.events) {
      const eventThread = nonEmptyStr(e.attrs["conversation.id"]);
      if (eventThread && !threads.has(r.traceId)) threads.set(r.traceId, eventThread);
      if (e.attrs["event.name"] === "codex.api_request" && e.at !== null) {
        const list = calls.get(r.traceId) ?? [];
        list.push({ at: e.at, httpStatus: httpStatusOf(intOf(e.attrs["http.response.status_code"])), message: nonEmptyStr(e.attrs["error.message"]) });
        calls.set(r.traceId, list);
      }
    }
  }
  for (const list of calls.values()) list.sort((a, b) => a.at - b.at);
  return { threads, calls };
}

function readSpan(r: OtlpRecord, facts: ReturnType<typeof traceFacts>): OtlpOutput {
  // A span's own conversation first (`thread.id` is the OS thread on most spans), then its trace's.
  const threadId = nonEmptyStr(r.attrs["conversation.id"]) ?? (r.name === "session_task.turn" ? nonEmptyStr(r.attrs["thread.id"]) : null) ?? (r.traceId ? facts.threads.get(r.traceId) : undefined);
  const calls = (r.traceId && facts.calls.get(r.traceId)) || [];
  const lastCall = (at: number) => calls.filter((c) => c.at <= at).at(-1) ?? null;
  // A notice whose call went out in an earlier export: the trace's next call, when that failed
  // too, tells its kind (a stream retry repeats the failure it follows).
  const failureNear = (at: number) => lastCall(at) ?? calls.find((c) => c.at > at && c.httpStatus !== null && c.httpStatus >= 400) ?? null;
  const events: NormalizedEvent[] = [];
  let nativeType: string | null = r.name;
  for (const ev of r.events) {
    const name = nonEmptyStr(ev.attrs["event.name"]) ?? ev.name;
    if ((name !== "codex.retry" && name !== "codex.turn_profile") || ev.at === null || !threadId) continue;
    nativeType = name;
    const call = name === "codex.retry" ? failureNear(ev.at) : lastCall(ev.at);
    if (name === "codex.retry") {
      const e = base(r, "retry", threadId, ev.at, ev.attrs);
      e.willRetry = true;
      e.attempt = intOf(ev.attrs["retry.attempt"]);
      const delay = intOf(ev.attrs["retry.delay_ms"]);
      if (delay !== null && delay >= 0) e.delayMs = delay;
      e.error = { httpStatus: call?.httpStatus ?? null, message: call?.message ?? null, details: { layer: ev.attrs["retry.layer"] ?? null, operation: ev.attrs["retry.operation"] ?? null } };
      events.push(e);
    } else if (!call) {
      // The trace's calls went in another export: the turn ended as its last call did, which the
      // engine knows from the calls' own records.
      const e = base(r, "turn.completed", threadId, ev.at, r.attrs);
      e.lastCallDecides = true;
      events.push(e);
    } else {
      const failed = call.httpStatus !== null && call.httpStatus >= 400;
      const e = base(r, failed ? "turn.failed" : "turn.completed", threadId, ev.at, r.attrs);
      if (failed) {
        e.error = {
          httpStatus: call.httpStatus,
          message: call.message,
          details: { samplingRequestCount: intOf(ev.attrs.sampling_request_count), samplingRetryCount: intOf(ev.attrs.sampling_retry_count) },
        };
      }
      events.push(e);
    }
  }
  return { index: r.index, events, nativeType };
}

export const codexOtlp: OtlpAgent = {
  matches: (service) => service.startsWith("codex"),
  read(records, receivedAt) {
    const facts = traceFacts(records);
    return records.map((r) => (r.signal === "logs" ? readLog(r, receivedAt) : readSpan(r, facts)));
  },
};
