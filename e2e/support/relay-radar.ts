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
  if (r.status !== 200) return null;
  const view = r.body as ThreadDetailView & { thread: { key: number } };
  // The detail carries only the newest events, without payloads; these suites read every event with its payload.
  view.events = await everyEvent(server, view.thread.key);
  return view;
}

/** Every event of a thread with its raw payload, in reducer order, page by page. */
async function everyEvent(server: RunningServer, key: number): Promise<ThreadDetailView["events"]> {
  const events: ThreadDetailView["events"] = [];
  let before: number | null = null;
  do {
    const page = await get(server, `/api/v1/threads/by-key/${key}/events?raw=1&limit=500${before == null ? "" : `&before=${before}`}`);
    if (page.status !== 200) throw new Error(`events of thread ${key}: ${page.status} ${JSON.stringify(page.body)}`);
    events.push(...page.body.events);
    before = page.body.earlier;
  } while (before != null);
  return events.reverse();
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
