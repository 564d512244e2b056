/** Reading the radar's view of a thread in relay suites. */
import { get, type RunningServer } from "./server";

export interface ThreadDetailView {
  thread: {
    id: string;
    status: string;
    turnId: string | null;
    agent: string | null;
    provider: string | null;
    retry: null | { kind: string; attempt: number; maxAttempts: number | null; nextAttemptAt: string | null; nextAttemptEstimated: boolean; deadlineAt: string | null; policy: string | null };
    lastError: null | { kind: string; httpStatus: number | null; code: string | null; message: string | null };
  };
  episodes: {
    outcome: string | null;
    outcomeCode: string | null;
    kind: string;
    policy: string | null;
    maxAttempts: number | null;
    startedAt: string;
    endedAt: string | null;
    attempts: { n: number; noticeAt: string; estimated: boolean; deadlineAt: string | null; httpStatus: number | null }[];
  }[];
  events: { type: string; nativeType: string | null; turnId: string | null; raw: any }[];
  directives: { id: string; kind: string; origin: string; state: string; result: string | null; detail: string | null; createdAt: string; acknowledgedAt: string | null }[];
}

/** The `n` of every `radarTest/probe` line stored on a thread (relay delivery suites send those). */
export async function probesStored(server: RunningServer, threadId: string): Promise<number[]> {
  const view = await threadDetail(server, threadId);
  return (view?.events ?? []).filter((e) => e.nativeType === "radarTest/probe").map((e) => e.raw.message.params.n as number);
}

export async function threadDetail(server: RunningServer, id: string): Promise<ThreadDetailView | null> {
  const r = await get(server, `/api/v1/threads/${encodeURIComponent(id)}`);
  return r.status === 200 ? (r.body as ThreadDetailView) : null;
}

/** One line per thread state for failure messages. */
export function summary(view: ThreadDetailView | null): string {
  if (!view) return "(thread not found)";
  const t = view.thread;
  return [
    `status=${t.status} retry=${JSON.stringify(t.retry)}`,
    `events=${view.events.map((e) => `${e.type}(${e.nativeType})`).join(",")}`,
    `directives=${JSON.stringify(view.directives.map((d) => ({ kind: d.kind, state: d.state, result: d.result, detail: d.detail })))}`,
  ].join("\n");
}
