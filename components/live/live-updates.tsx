"use client";

import { useQueryClient } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useState, type ReactNode } from "react";
import { applyNotice, applyThreadChanges, LIVE_KEYS, queryKeys, STREAM_URL } from "@/lib/client/queries";
import type { StreamHello, StreamLimits, StreamThreads } from "@/lib/wire/types";
import { useServerClock } from "@/components/time/server-clock";

/**
 * One server-sent event stream per tab: when the server says which threads changed, the queries
 * they touch are brought up to date (see applyThreadChanges: changed rows only, from the notice or
 * read by key, and the page when rows may come, go or move). After a (re)connect everything live refetches. While the stream is down, queries
 * poll instead (see `pollInterval`) and the indicator says so.
 */
export type LiveState = { status: "connecting" | "live" | "reconnecting"; since: number | null };

const LiveContext = createContext<LiveState>({ status: "connecting", since: null });
const POLL_WHEN_DOWN_MS = 5_000;

export function LiveUpdatesProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const { observe } = useServerClock();
  const [state, setState] = useState<LiveState>({ status: "connecting", since: null });

  useEffect(() => {
    const source = new EventSource(STREAM_URL);
    const invalidate = () => {
      for (const queryKey of LIVE_KEYS) void queryClient.invalidateQueries({ queryKey });
    };
    source.addEventListener("open", () => setState({ status: "live", since: Date.now() }));
    source.addEventListener("hello", (event) => {
      observe((JSON.parse((event as MessageEvent).data) as StreamHello).serverTime);
      // Anything may have changed while we were away.
      invalidate();
    });
    source.addEventListener("threads", (event) => {
      const message = JSON.parse((event as MessageEvent).data) as StreamThreads;
      observe(message.serverTime);
      // A failed row refetch leaves the rows as they were until the page refetches.
      applyThreadChanges(queryClient, message).catch(() => invalidate());
    });
    source.addEventListener("limits", (event) => {
      observe((JSON.parse((event as MessageEvent).data) as StreamLimits).serverTime);
      applyNotice(queryClient, queryKeys.limits);
    });
    source.addEventListener("incidents", (event) => {
      observe((JSON.parse((event as MessageEvent).data) as StreamLimits).serverTime);
      applyNotice(queryClient, queryKeys.incidents);
    });
    source.addEventListener("error", () =>
      setState((previous) => (previous.status === "reconnecting" ? previous : { status: "reconnecting", since: Date.now() })),
    );
    return () => source.close();
  }, [queryClient, observe]);

  return <LiveContext.Provider value={state}>{children}</LiveContext.Provider>;
}

export function useLiveState(): LiveState {
  return useContext(LiveContext);
}

/** Queries poll only while the live stream is down. */
export function usePollInterval(): number | false {
  return useLiveState().status === "live" ? false : POLL_WHEN_DOWN_MS;
}
