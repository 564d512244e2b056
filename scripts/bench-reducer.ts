import { pathToFileURL } from "node:url";
import { initialThreadState, reduce, tick } from "../lib/retry";
import type { ErrorReport, RadarEvent, RadarEventType, ThreadState } from "../lib/retry";

/**
 * Reducer throughput on a synthetic, deterministic stream: 1,000,000 events over 10,000
 * threads, each thread running 10 turns of 10 events (turn.started, retry notices with advice,
 * an attempt, progress, a capacity notice, the turn's end). Every 20th thread ends a turn on
 * a retry and falls silent, so the watchdog's ticks exhaust it, break it and resume it.
 */
const THREADS = 10_000;
const EVENTS_PER_THREAD = 100;
const TURN_GAP_MS = 200_000;
const EVENT_GAP_MS = 5_000;
const T0 = Date.UTC(2026, 10, 29);

const RATE_LIMIT: ErrorReport = { httpStatus: 429, code: "rate_limit_exceeded", retryAfter: "2", message: "Rate limit reached. Please try again in 2s." };
const OVERLOADED: ErrorReport = { httpStatus: 529, code: "overloaded_error", message: "Overloaded" };

interface Shape {
  type: RadarEventType;
  error?: ErrorReport;
  attempt?: number;
}

/** One turn's events by position; the last is the turn's end (or, for silent threads, a retry). */
const TURN: Shape[] = [
  { type: "turn.started" },
  { type: "retry", error: RATE_LIMIT, attempt: 1 },
  { type: "attempt", attempt: 1 },
  { type: "retry", error: RATE_LIMIT, attempt: 2 },
  { type: "progress" },
  { type: "progress" },
  { type: "retry", error: OVERLOADED, attempt: 1 },
  { type: "progress" },
  { type: "progress" },
  { type: "turn.completed" },
];
const SILENT_END: Shape = { type: "retry", error: RATE_LIMIT, attempt: 1 };

function eventFor(thread: number, index: number, threadId: string): RadarEvent {
  const turn = Math.floor(index / TURN.length);
  const position = index % TURN.length;
  const shape = position === TURN.length - 1 && thread % 20 === 0 ? SILENT_END : TURN[position];
  return {
    seq: index + 1,
    type: shape.type,
    at: T0 + turn * TURN_GAP_MS + position * EVENT_GAP_MS + (thread % 1000),
    threadId,
    turnId: `turn-${turn}`,
    error: shape.error,
    attempt: shape.attempt,
    willRetry: shape.type === "retry" ? true : undefined,
  };
}

export async function benchReducer(): Promise<{ eventsPerSecond: number; events: number; threads: number; ms: number }> {
  const ids = Array.from({ length: THREADS }, (_, i) => `thread-${i}`);
  const states: ThreadState[] = ids.map((id) => initialThreadState(id));
  let events = 0;
  const started = performance.now();
  for (let index = 0; index < EVENTS_PER_THREAD; index++) {
    for (let thread = 0; thread < THREADS; thread++) {
      const event = eventFor(thread, index, ids[thread]);
      states[thread] = reduce(states[thread], event, event.at).state;
      events++;
    }
    // The watchdog's pass: wake every thread whose timer is due by the end of this round.
    const roundEnd = T0 + Math.floor(index / TURN.length) * TURN_GAP_MS + ((index % TURN.length) + 1) * EVENT_GAP_MS + 1000;
    for (let thread = 0; thread < THREADS; thread++) {
      const wakeAt = states[thread].wakeAt;
      if (wakeAt !== null && wakeAt <= roundEnd) states[thread] = tick(states[thread], roundEnd).state;
    }
  }
  const ms = performance.now() - started;
  return { eventsPerSecond: Math.round(events / (ms / 1000)), events, threads: THREADS, ms: Math.round(ms) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchReducer().then((result) => {
    console.log(`reducer: ${result.events.toLocaleString("en")} events over ${result.threads.toLocaleString("en")} threads in ${result.ms} ms = ${result.eventsPerSecond.toLocaleString("en")} events/s`);
  });
}
