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
 * insights, which aggregate every thread, refetch too.
 */
export async function applyThreadChanges(queryClient: QueryClient, changes: StreamThreads["threads"]): Promise<void> {
  void queryClient.invalidateQueries({ queryKey: queryKeys.insights });
  for (const { key } of changes) void queryClient.invalidateQueries({ queryKey: queryKeys.thread(key) });
  if (changes.some((change) => change.reorder)) {
    void queryClient.invalidateQueries({ queryKey: queryKeys.boards });
    void queryClient.invalidateQueries({ queryKey: queryKeys.limits });
    void queryClient.invalidateQueries({ queryKey: queryKeys.incidents });
    return;
  }
  const boards = queryClient.getQueriesData<ThreadBoard>({ queryKey: queryKeys.boards });
  const shown = new Set(boards.flatMap(([, board]) => board?.threads.map((thread) => thread.key) ?? []));
  const keys = changes.map((change) => change.key).filter((key) => shown.has(key));
  if (keys.length === 0) return;
  if (keys.length > MAX_THREAD_ROWS) {
    void queryClient.invalidateQueries({ queryKey: queryKeys.boards });
    return;
  }
  const rows = await fetchJson<ThreadRows>(`/api/v1/threads?keys=${keys.join(",")}`);
  const fresh = new Map(rows.threads.map((thread) => [thread.key, thread]));
  queryClient.setQueriesData<ThreadBoard>({ queryKey: queryKeys.boards }, (board) =>
    board && { ...board, serverTime: rows.serverTime, threads: board.threads.map((thread) => fresh.get(thread.key) ?? thread) },
  );
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
