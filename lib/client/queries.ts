import { queryOptions, type QueryClient } from "@tanstack/react-query";
import {
  EVENT_PAGE_SIZE,
  MAX_THREAD_ROWS,
  type EventPage,
  type EventRaw,
  type IncidentDetail,
  type IncidentList,
  type IncidentStateFilter,
  type InsightsResponse,
  type LimitsView,
  type StreamThreads,
  type ThreadBoard,
  type ThreadDetailResponse,
  type ThreadRows,
  type AlertsOverview,
} from "@/lib/wire/types";

/**
 * Everything the browser reads from the API: one fetcher, the query keys and the query options.
 * Components use these; none fetches or names a key itself.
 */

/** The live stream of change notices (lib/server/bus → app/api/v1/stream). */
export const STREAM_URL = "/api/v1/stream";

export const queryKeys = {
  /** Every query showing thread state: the live stream invalidates these on a change. */
  threads: ["threads"] as const,
  boards: ["threads", "board"] as const,
  board: (queryString: string) => ["threads", "board", queryString] as const,
  thread: (key: number) => ["threads", "detail", key] as const,
  /**
   * Earlier pages of a thread's timeline and single raw payloads: outside the live keys, since
   * what happened before the newest page and what a source sent do not change.
   */
  earlierEvents: (key: number, before: number) => ["timeline", key, "before", before] as const,
  eventRaw: (key: number, seq: number) => ["timeline", key, "raw", seq] as const,
  /** Insights are computed from the same threads, so they go live with them. */
  insights: ["insights"] as const,
  insightsFor: (queryString: string) => ["insights", queryString] as const,
  /** Usage windows: a `limits` notice refetches them, and so does a status change (their blocked threads). */
  limits: ["limits"] as const,
  /** Incidents: an `incidents` notice refetches them, and so does a status change (what Stop all would stop). */
  incidents: ["incidents"] as const,
  incidentList: (state: IncidentStateFilter) => ["incidents", "list", state] as const,
  incident: (id: string) => ["incidents", "detail", id] as const,
  /** The Alerts page (admin): polled, since deliveries happen in the background. */
  alerts: ["alerts"] as const,
};

/** The keys that are stale after the stream was away (its `hello`): anything may have changed. */
export const LIVE_KEYS = [queryKeys.threads, queryKeys.insights, queryKeys.limits, queryKeys.incidents];

/**
 * The browser's half of the live-update protocol (README "Live updates"): a change notice makes
 * stale only what it touches. A new thread or a changed status may change which rows a board
 * shows and their order, so boards refetch their page; otherwise only the changed rows that a
 * board shows are refetched, in one request, and replaced in place (their order by recency is
 * brought up to date with the next page refetch). Open thread pages of changed threads refetch;
 * insights, which aggregate every thread, refetch too. Every refetch goes through `refresh`, so
 * a busy fleet costs a browser at most one request in flight per query and one more queued.
 */
export async function applyThreadChanges(queryClient: QueryClient, changes: StreamThreads["threads"]): Promise<void> {
  refresh(queryClient, queryKeys.insights);
  for (const { key } of changes) refresh(queryClient, queryKeys.thread(key));
  if (changes.some((change) => change.reorder)) {
    refresh(queryClient, queryKeys.boards);
    refresh(queryClient, queryKeys.limits);
    refresh(queryClient, queryKeys.incidents);
    return;
  }
  const boards = queryClient.getQueriesData<ThreadBoard>({ queryKey: queryKeys.boards });
  const shown = new Set(boards.flatMap(([, board]) => board?.threads.map((thread) => thread.key) ?? []));
  const rows = liveState(queryClient).rows;
  for (const { key } of changes) if (shown.has(key)) rows.pending.add(key);
  if (rows.running || rows.pending.size === 0) return;
  rows.running = true;
  try {
    // Keys that change while a row request is out wait for it, then go together in the next.
    while (rows.pending.size > 0) {
      const keys = [...rows.pending];
      rows.pending.clear();
      if (keys.length > MAX_THREAD_ROWS) {
        refresh(queryClient, queryKeys.boards);
        continue;
      }
      const fetched = await fetchJson<ThreadRows>(`/api/v1/threads?keys=${keys.join(",")}`);
      const fresh = new Map(fetched.threads.map((thread) => [thread.key, thread]));
      queryClient.setQueriesData<ThreadBoard>({ queryKey: queryKeys.boards }, (board) =>
        board && { ...board, serverTime: fetched.serverTime, threads: board.threads.map((thread) => fresh.get(thread.key) ?? thread) },
      );
    }
  } finally {
    rows.running = false;
    rows.pending.clear();
  }
}

/** Per query client: the live refetches in flight and queued, and the board rows waiting for theirs. */
interface LiveRefetches {
  running: Set<string>;
  queued: Set<string>;
  rows: { running: boolean; pending: Set<number> };
}
const liveRefetches = new WeakMap<QueryClient, LiveRefetches>();

function liveState(queryClient: QueryClient): LiveRefetches {
  let state = liveRefetches.get(queryClient);
  if (!state) liveRefetches.set(queryClient, (state = { running: new Set(), queued: new Set(), rows: { running: false, pending: new Set() } }));
  return state;
}

/**
 * Marks a live key stale and refetches what is shown of it, never cancelling a refetch under
 * way: notices arrive every few hundred milliseconds on a busy fleet, and if each cancelled the
 * previous refetch a board slower than that to read would never show anything. A notice that
 * arrives during a refetch queues one more, since what is being read may predate it.
 */
function refresh(queryClient: QueryClient, queryKey: readonly unknown[]): void {
  const state = liveState(queryClient);
  const id = JSON.stringify(queryKey);
  if (state.running.has(id)) {
    state.queued.add(id);
    return;
  }
  state.running.add(id);
  // A refetch started elsewhere (a mount, a reconnect) may predate this notice: it is awaited,
  // not joined, and then the query is read again.
  const startedElsewhere = queryClient.isFetching({ queryKey }) > 0;
  const refetch = () => queryClient.invalidateQueries({ queryKey }, { cancelRefetch: false });
  void refetch()
    .then(() => (startedElsewhere ? refetch() : undefined))
    .catch(() => {})
    .finally(() => {
      state.running.delete(id);
      if (state.queued.delete(id)) refresh(queryClient, queryKey);
    });
}

/** GET a JSON resource; a refusal throws with the problem+json `detail`, so the UI can say what went wrong. */
export async function fetchJson<T>(url: string): Promise<T> {
  const response = await fetch(url, { cache: "no-store", headers: { accept: "application/json" } });
  if (!response.ok) throw new Error((await problemDetail(response)) ?? `The server answered ${response.status}`);
  return (await response.json()) as T;
}

async function problemDetail(response: Response): Promise<string | null> {
  try {
    const body = (await response.json()) as { detail?: unknown };
    return typeof body.detail === "string" ? body.detail : null;
  } catch {
    return null;
  }
}

/** The board: the threads of a filter (its URL query string), those needing attention first. */
export function boardQuery(queryString: string) {
  const params = new URLSearchParams(queryString);
  params.set("order", "attention");
  return queryOptions({ queryKey: queryKeys.board(queryString), queryFn: () => fetchJson<ThreadBoard>(`/api/v1/threads?${params}`) });
}

/** One thread by its internal key (the thread page). */
export function threadQuery(key: number) {
  return queryOptions({ queryKey: queryKeys.thread(key), queryFn: () => fetchJson<ThreadDetailResponse>(`/api/v1/threads/by-key/${key}`) });
}

/** The page of a thread's events before the event `before`, newest first (the timeline's "load earlier"). */
export function earlierEventsQuery(key: number, before: number) {
  return queryOptions({
    queryKey: queryKeys.earlierEvents(key, before),
    queryFn: () => fetchJson<EventPage>(`/api/v1/threads/by-key/${key}/events?before=${before}&limit=${EVENT_PAGE_SIZE}`),
    staleTime: Infinity,
  });
}

/** One event's raw payload, fetched when the timeline shows it. */
export function eventRawQuery(key: number, seq: number) {
  return queryOptions({
    queryKey: queryKeys.eventRaw(key, seq),
    queryFn: () => fetchJson<EventRaw>(`/api/v1/threads/by-key/${key}/events/${seq}/raw`),
    staleTime: Infinity,
  });
}

/** Insights for a query string such as "?range=24h&provider=openai". */
export function insightsQuery(queryString: string) {
  return queryOptions({ queryKey: queryKeys.insightsFor(queryString), queryFn: () => fetchJson<InsightsResponse>(`/api/v1/insights${queryString}`) });
}

/** Every usage window's latest snapshot (the Limits page). */
export function limitsQuery() {
  return queryOptions({ queryKey: queryKeys.limits, queryFn: () => fetchJson<LimitsView>("/api/v1/limits") });
}

/** Incidents, open first (`state` as GET /api/v1/incidents takes it). */
export function incidentsQuery(state: IncidentStateFilter) {
  return queryOptions({ queryKey: queryKeys.incidentList(state), queryFn: () => fetchJson<IncidentList>(`/api/v1/incidents?state=${state}`) });
}

/** One incident with its threads and timeline. */
export function incidentQuery(id: string) {
  return queryOptions({ queryKey: queryKeys.incident(id), queryFn: () => fetchJson<IncidentDetail>(`/api/v1/incidents/${encodeURIComponent(id)}`) });
}

/** Destinations, rules and the latest alerts with their deliveries (admin). */
export function alertsQuery() {
  return queryOptions({ queryKey: queryKeys.alerts, queryFn: () => fetchJson<AlertsOverview>("/api/v1/alerts") });
}
