import { initialThreadState, reduce, tickOnTime } from "./reducer";
import type { RadarEvent, RadarEventType, StepEffects, StepResult, ThreadState } from "./types";

/**
 * Builders for engine tests (unit and capture replays): events on one thread, times in ms
 * after T0, sequence numbers in creation order.
 */
export const T0 = Date.UTC(2026, 10, 29, 17, 0, 0);
export const SEC = 1000;
export const MIN = 60 * SEC;

export type EventFields = Partial<Omit<RadarEvent, "seq" | "type" | "at">>;

export function eventsOn(threadId = "thread-1") {
  let seq = 0;
  return (type: RadarEventType, atMs: number, fields: EventFields = {}): RadarEvent => ({
    threadId,
    ...fields,
    seq: ++seq,
    type,
    at: T0 + atMs,
  });
}

/**
 * Feeds events the way a server that stays up does: each at its own time after the timers due
 * before it fired on time, then the watchdog on time up to `untilMs` after T0. Tests of late ticks
 * (downtime) call tick() themselves.
 */
export function feed(events: RadarEvent[], untilMs?: number, start: ThreadState = initialThreadState(events[0].threadId)): ThreadState {
  return feedStep(events, untilMs, start).state;
}

/** As feed(), with the effects of the last step taken (an event's, or the last timer's). */
export function feedStep(events: RadarEvent[], untilMs?: number, start: ThreadState = initialThreadState(events[0].threadId)): StepResult {
  let last: StepResult = { state: start, effects: { directives: [], applied: null, endedEpisode: null } };
  const onStep = (_before: ThreadState, after: StepResult) => (last = after);
  for (const event of events) last = reduce(tickOnTime(last.state, event.at, onStep).state, event, event.at);
  if (untilMs !== undefined) tickOnTime(last.state, T0 + untilMs, onStep);
  return last;
}

/** A step's state and its effects as one object, for assertions that read both. */
export function withEffects({ state, effects }: StepResult): ThreadState & StepEffects {
  return { ...state, ...effects };
}
