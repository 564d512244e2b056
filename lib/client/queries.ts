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
  type ThreadView,
  type AlertsOverview,
} from "@/lib/wire/types";
import { isFiltered, parseThreadQuery } from "@/lib/threads/filter";
import { mergeBoardRows, newerPart, type OrderedRowsRead, type RowOrders } from "./board-rows";

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
 * stale only what it touches. Boards put the changed threads they may show in place
 * (mergeBoardRows): changed rows replaced, rows that left the filter removed, a first page gaining
 * the new threads that sort onto it. An unfiltered board takes those rows from the notice when it
 * carries them; any other board reads them at once, in one request with its own filter. When a
 * thread is new or changed status, the page's counts and membership may change too, so boards
 * also read their page again, at most SUMMARY_READS_PER_SECOND times a second, as do usage windows
 * and incidents. Open thread pages of changed threads refetch; insights, which aggregate every
 * thread, refetch too. Every refetch goes through `refresh`, so a busy fleet costs a browser at
 * most one request in flight per query and one more queued.
 */
export async function applyThreadChanges(queryClient: QueryClient, notice: StreamThreads): Promise<void> {
  const changes = notice.threads;
  refresh(queryClient, queryKeys.insights);
  for (const { key } of changes) refresh(queryClient, queryKeys.thread(key));
  if (changes.some((change) => change.reorder)) {
    refresh(queryClient, queryKeys.boards, SUMMARY_READS_PER_SECOND);
    refresh(queryClient, queryKeys.limits, SUMMARY_READS_PER_SECOND);
    refresh(queryClient, queryKeys.incidents, SUMMARY_READS_PER_SECOND);
  }
  const reads: Promise<void>[] = [];
  for (const query of queryClient.getQueryCache().findAll({ queryKey: queryKeys.boards, type: "active" })) {
    const board = query.state.data as ThreadBoard | undefined;
    if (!board) continue;
    const queryString = query.queryKey[2] as string;
    const shown = new Set(board.threads.map((thread) => thread.key));
    // A first page may gain any new or re-sorted thread; other pages only change the rows they show.
    const wanted = changes.filter((change) => shown.has(change.key) || (change.reorder && board.page === 1));
    if (wanted.length === 0) continue;
    if (notice.rows && !boardFiltered(queryString)) applyNoticeRows(queryClient, queryString, wanted, notice.rows, notice.serverTime);
    else reads.push(readBoardRows(queryClient, queryString, wanted));
  }
  await Promise.all(reads);
}

/**
 * Whether a board's query string narrows it: the rows a notice carries are the unfiltered board's.
 * Remembered per query string, since every notice asks it of every board shown.
 */
function boardFiltered(queryString: string): boolean {
  let filtered = filteredBoards.get(queryString);
  if (filtered === undefined) {
    const parsed = parseThreadQuery(new URLSearchParams(queryString));
    filtered = !parsed.ok || isFiltered(parsed.query);
    if (filteredBoards.size >= MAX_REMEMBERED_FILTERS) filteredBoards.delete(filteredBoards.keys().next().value!);
    filteredBoards.set(queryString, filtered);
  }
  return filtered;
}
const filteredBoards = new Map<string, boolean>();
const MAX_REMEMBERED_FILTERS = 100;

/** Puts the rows a notice carried in place on an unfiltered board: no request. */
function applyNoticeRows(queryClient: QueryClient, queryString: string, wanted: StreamThreads["threads"], rows: ThreadView[], serverTime: string): void {
  const asked = new Set(wanted.map((change) => change.key));
  applyRowsRead(queryClient, queryString, {
    asked: [...asked],
    fresh: rows.filter((thread) => asked.has(thread.key)),
    reorder: wanted.some((change) => change.reorder),
    serverTime,
    order: nextReadOrder(queryClient),
  });
  // A row read under way (a burst's, sent as keys only) may answer with older rows: it is
  // followed by one more that reads these keys again.
  const reading = liveState(queryClient).rows.get(queryString);
  if (reading?.running) for (const { key, reorder } of wanted) reading.pending.set(key, (reading.pending.get(key) ?? false) || reorder);
}

/**
 * How many times a second a board page, the usage windows and the incidents are read at most: on a
 * busy fleet every notice may change their counts, and the rows that matter come at once by key
 * anyway. After a quiet spell they are read at once.
 */
const SUMMARY_READS_PER_SECOND = 3;

/** A `limits` or `incidents` notice: those are read again, never cancelling a read under way. */
export function applyNotice(queryClient: QueryClient, queryKey: typeof queryKeys.limits | typeof queryKeys.incidents): void {
  refresh(queryClient, queryKey, SUMMARY_READS_PER_SECOND);
}

/** Reads a board's changed rows by key, one request at a time; keys that change meanwhile go together in the next. */
async function readBoardRows(queryClient: QueryClient, queryString: string, changes: StreamThreads["threads"]): Promise<void> {
  const state = liveState(queryClient);
  let rows = state.rows.get(queryString);
  if (!rows) state.rows.set(queryString, (rows = { running: false, pending: new Map() }));
  for (const { key, reorder } of changes) rows.pending.set(key, (rows.pending.get(key) ?? false) || reorder);
  if (rows.running) return;
  rows.running = true;
  try {
    while (rows.pending.size > 0) {
      const pending = [...rows.pending];
      rows.pending.clear();
      if (pending.length > MAX_THREAD_ROWS) {
        refresh(queryClient, queryKeys.board(queryString));
        continue;
      }
      const asked = pending.map(([key]) => key);
      const params = new URLSearchParams(queryString);
      params.set("keys", asked.join(","));
      params.set("matching", "1");
      const order = nextReadOrder(queryClient);
      const fetched = await fetchJson<ThreadRows>(`/api/v1/threads?${params}`);
      applyRowsRead(queryClient, queryString, { asked, fresh: fetched.threads, reorder: pending.some(([, reorder]) => reorder), serverTime: fetched.serverTime, order });
    }
  } finally {
    rows.running = false;
    rows.pending.clear();
  }
}

/**
 * Puts rows in place on a board, but only those no newer read already brought (newerPart): reads
 * by key overlap, and one answered later may have been read earlier. They are also remembered:
 * row reads newer than a page read that is still under way are applied again to that page when it
 * arrives (boardQuery), so a page read that started before a change never hides it.
 */
function applyRowsRead(queryClient: QueryClient, queryString: string, read: OrderedRowsRead): void {
  const state = liveState(queryClient);
  let orders = state.rowOrders.get(queryString);
  // No page read yet in this browser: the board shown came with the page, before any read.
  if (!orders) state.rowOrders.set(queryString, (orders = { page: 0, rows: new Map() }));
  const news = newerPart(read, orders);
  if (news.asked.length === 0) return;
  const reads = state.rowReads.get(queryString) ?? [];
  reads.push(news);
  // Reads forgotten here cannot be applied again to a page read under way: that page is read anew.
  for (const forgotten of reads.slice(0, -MAX_REMEMBERED_ROW_READS)) {
    state.forgottenRowReads.set(queryString, Math.max(forgotten.order, state.forgottenRowReads.get(queryString) ?? 0));
  }
  state.rowReads.set(queryString, reads.slice(-MAX_REMEMBERED_ROW_READS));
  queryClient.setQueryData<ThreadBoard>(queryKeys.board(queryString), (board) => board && mergeBoardRows(board, news));
}
const MAX_REMEMBERED_ROW_READS = 20;

/** A page read (sent at `order`) with the row reads sent after it applied again. */
function withNewerRows(queryClient: QueryClient, queryString: string, board: ThreadBoard, order: number): ThreadBoard {
  const state = liveState(queryClient);
  const newer = (state.rowReads.get(queryString) ?? []).filter((read) => read.order > order);
  state.rowReads.set(queryString, newer);
  // A row read sent after this page read was forgotten (more came in than are remembered): its
  // row may be newer than the page's, so the page is read again, after all of them.
  const forgotten = state.forgottenRowReads.get(queryString) ?? 0;
  state.forgottenRowReads.delete(queryString);
  if (forgotten > order) setTimeout(() => refresh(queryClient, queryKeys.board(queryString), SUMMARY_READS_PER_SECOND), 0);
  // Every row is now as new as this page read, except those the newer row reads bring.
  const orders: RowOrders = { page: order, rows: new Map() };
  for (const read of newer) for (const key of read.asked) orders.rows.set(key, Math.max(read.order, orders.rows.get(key) ?? 0));
  state.rowOrders.set(queryString, orders);
  return newer.reduce(mergeBoardRows, board);
}

/** Per query client: the live refetches in flight, queued and held back by their rate, and each board's row reads. */
interface LiveRefetches {
  running: Set<string>;
  queued: Set<string>;
  held: Set<string>;
  /** When the refetches of each key of a limited rate started, within the last second. */
  started: Map<string, number[]>;
  rows: Map<string, { running: boolean; pending: Map<number, boolean> }>;
  rowReads: Map<string, OrderedRowsRead[]>;
  /** Per board: the latest order among row reads no longer remembered (applyRowsRead). */
  forgottenRowReads: Map<string, number>;
  /** Per board: where each of its rows stands in the order of reads (applyRowsRead keeps only newer ones). */
  rowOrders: Map<string, RowOrders>;
  /** The last place given in this browser's order of reads (OrderedRowsRead). */
  readOrder: number;
}
const liveRefetches = new WeakMap<QueryClient, LiveRefetches>();

function liveState(queryClient: QueryClient): LiveRefetches {
  let state = liveRefetches.get(queryClient);
  if (!state) {
    state = { running: new Set(), queued: new Set(), held: new Set(), started: new Map(), rows: new Map(), rowReads: new Map(), forgottenRowReads: new Map(), rowOrders: new Map(), readOrder: 0 };
    liveRefetches.set(queryClient, state);
  }
  return state;
}

/** The next place in this browser's order of reads: taken when a read is sent or a notice's rows arrive. */
function nextReadOrder(queryClient: QueryClient): number {
  return ++liveState(queryClient).readOrder;
}

/**
 * Marks a live key stale and refetches what is shown of it, never cancelling a refetch under
 * way: notices arrive every few hundred milliseconds on a busy fleet, and if each cancelled the
 * previous refetch a board slower than that to read would never show anything. A notice that
 * arrives during a refetch queues one more, since what is being read may predate it. With
 * `perSecond`, a refetch that would be one more than that within a second waits until it is not.
 */
function refresh(queryClient: QueryClient, queryKey: readonly unknown[], perSecond = Infinity): void {
  const state = liveState(queryClient);
  const id = JSON.stringify(queryKey);
  if (state.held.has(id)) return;
  if (state.running.has(id)) {
    state.queued.add(id);
    return;
  }
  const now = Date.now();
  const recent = (state.started.get(id) ?? []).filter((at) => at > now - 1000);
  if (recent.length >= perSecond) {
    state.held.add(id);
    setTimeout(() => {
      state.held.delete(id);
      refresh(queryClient, queryKey, perSecond);
    }, recent[0] + 1000 - now);
    return;
  }
  state.running.add(id);
  if (perSecond !== Infinity) state.started.set(id, [...recent, now]);
  // A refetch started elsewhere (a mount, a reconnect) may predate this notice: it is awaited,
  // not joined, and then the query is read again.
  const startedElsewhere = queryClient.isFetching({ queryKey }) > 0;
  const refetch = () => queryClient.invalidateQueries({ queryKey }, { cancelRefetch: false });
  void refetch()
    .then(() => (startedElsewhere ? refetch() : undefined))
    .catch(() => {})
    .finally(() => {
      state.running.delete(id);
      if (state.queued.delete(id)) refresh(queryClient, queryKey, perSecond);
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
  return queryOptions({
    queryKey: queryKeys.board(queryString),
    queryFn: async ({ client }) => {
      const order = nextReadOrder(client);
      return withNewerRows(client, queryString, await fetchJson<ThreadBoard>(`/api/v1/threads?${params}`), order);
    },
  });
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
