/**
 * A known incident as canonical events (POST /api/v1/events), for the insights, exports and
 * metrics integration suites and the insights browser test. Three threads in four minutes from
 * `t0` (a whole minute), every episode ended by an event, every gap shorter than the policies'
 * deadlines, so the numbers are the same whenever it is ingested:
 *
 * - inc-a (codex, openai/gpt-5): two 429s advising 2 s; retry 1 came after 0.23 s (1.77 s early),
 *   retry 2 on time; progress → recovered.
 * - inc-b (codex, openai/gpt-5-mini): two 503 capacity notices advising 30 s; retry 1 after 40 s,
 *   retry 2 after 10 s (20 s early); the turn fails → failed.
 * - inc-c (claude, anthropic/claude-opus): a 429 advising 1 s, retried after 0.4 s (0.6 s early),
 *   progress → recovered; then a 502 retried after 1 s, then retry 6, past codex-native's bound
 *   of 5 → exhausted (its interrupt directive is for a moment long past: recorded expired).
 *
 * Titles carry spreadsheet formulas on purpose (CSV injection cases).
 */
export const INCIDENT_SPAN_MS = 10 * 60_000;

export function incidentEvents(t0: number, namespace = "") {
  const at = (seconds: number) => new Date(t0 + seconds * 1000).toISOString();
  const ns = (value: string) => `${value}${namespace}`;
  const a = { threadId: ns("inc-a"), turnId: "a1", agent: "codex", provider: ns("openai"), model: "gpt-5", title: '=HYPERLINK("http://evil.example","click")' };
  const b = { threadId: ns("inc-b"), turnId: "b1", agent: "codex", provider: ns("openai"), model: "gpt-5-mini", title: "-2+3 capacity refactor" };
  const c = { threadId: ns("inc-c"), turnId: "c1", agent: "claude", provider: ns("anthropic"), model: "claude-opus", title: "@docs rewrite" };
  const rateLimited = (retryAfter: string) => ({ httpStatus: 429, code: "rate_limit_exceeded", message: `Rate limit reached. Please try again in ${retryAfter}s.`, retryAfter });
  const overloaded = { httpStatus: 503, code: "server_is_overloaded", message: "Model at capacity", retryAfter: "30" };
  const badGateway = { httpStatus: 502, message: "Bad gateway" };
  const events = [
    { ...a, type: "turn.started", at: at(0) },
    { ...b, type: "turn.started", at: at(0) },
    { ...c, type: "turn.started", at: at(0) },
    { ...a, type: "retry", at: at(60), attempt: 1, error: rateLimited("2") },
    { ...b, type: "retry", at: at(60), attempt: 1, error: overloaded },
    { ...a, type: "attempt", at: at(60.23), attempt: 1 },
    { ...b, type: "attempt", at: at(100), attempt: 1 },
    { ...a, type: "retry", at: at(120), attempt: 2, error: rateLimited("2") },
    { ...a, type: "attempt", at: at(122), attempt: 2 },
    { ...b, type: "retry", at: at(130), attempt: 2, error: overloaded },
    { ...b, type: "attempt", at: at(140), attempt: 2 },
    { ...a, type: "progress", at: at(150) },
    { ...a, type: "turn.completed", at: at(170) },
    { ...b, type: "turn.failed", at: at(170), error: overloaded },
    { ...c, type: "retry", at: at(180), attempt: 1, error: { httpStatus: 429, code: "rate_limit_error", message: "rate limited", retryAfter: "1" } },
    { ...c, type: "attempt", at: at(180.4), attempt: 1 },
    { ...c, type: "progress", at: at(190) },
    { ...c, type: "retry", at: at(200), attempt: 1, error: badGateway },
    { ...c, type: "attempt", at: at(201), attempt: 1 },
    { ...c, type: "retry", at: at(210), attempt: 6, error: badGateway },
  ];
  return events.map((event, i) => ({ id: ns(`incident-${t0}-${i}`), ...event }));
}
