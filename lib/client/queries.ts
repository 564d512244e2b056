import { queryOptions } from "@tanstack/react-query";
import type { InsightsResponse, ThreadBoard, ThreadDetailResponse } from "@/lib/wire/types";

/**
 * Everything the browser reads from the API: one fetcher, the query keys and the query options.
 * Components use these; none fetches or names a key itself.
 */

/** The live stream of change notices (lib/server/bus → app/api/v1/stream). */
export const STREAM_URL = "/api/v1/stream";

export const queryKeys = {
  /** Every query showing thread state: the live stream invalidates these on a change. */
  threads: ["threads"] as const,
  board: (queryString: string) => ["threads", "board", queryString] as const,
  thread: (key: number) => ["threads", "detail", key] as const,
  /** Insights are computed from the same threads, so they go live with them. */
  insights: ["insights"] as const,
  insightsFor: (queryString: string) => ["insights", queryString] as const,
};

/** The keys a change notice from the live stream makes stale. */
export const LIVE_KEYS = [queryKeys.threads, queryKeys.insights];

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

/** Insights for a query string such as "?range=24h&provider=openai". */
export function insightsQuery(queryString: string) {
  return queryOptions({ queryKey: queryKeys.insightsFor(queryString), queryFn: () => fetchJson<InsightsResponse>(`/api/v1/insights${queryString}`) });
}
