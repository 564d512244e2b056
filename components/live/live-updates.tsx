"use client";

import { useQueryClient } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useState, type ReactNode } from "react";
import { applyNotice, applyThreadChanges, LIVE_KEYS, queryKeys, STREAM_URL } from "@/lib/client/queries";
import { HEALTHY_AFTER_MS, probeOutcome, reconnectDelay } from "@/lib/client/reconnect";
import type { StreamHello, StreamLimits, StreamThreads } from "@/lib/wire/types";
import { useServerClock } from "@/components/time/server-clock";

/**
 * One server-sent event stream per tab: when the server says which threads changed, the queries
 * they touch are brought up to date (see applyThreadChanges: changed rows only, from the notice or
 * read by key, and the page when rows may come, go or move). After a (re)connect everything live refetches. While the stream is down, queries
 * poll instead (see `pollInterval`) and the indicator says so.
 *
 * The tab reconnects itself, never the browser's EventSource: when the server ends the stream
 * (`end`: the credentials changed, or its lifetime is over) or it fails, the tab opens another
 * after a backed-off wait (lib/client/reconnect.ts). After a failure it first asks the stream's URL
 * once: refused (401/403) means signed out, and the tab stops (no stream, no polling) and says so.
 */
export type LiveState = { status: "connecting" | "live" | "reconnecting" | "offline" | "signed-out"; since: number | null };

const LiveContext = createContext<LiveState>({ status: "connecting", since: null });
const POLL_WHEN_DOWN_MS = 5_000;

export function LiveUpdatesProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const { observe } = useServerClock();
  const [state, setState] = useState<LiveState>({ status: "connecting", since: null });

  useEffect(() => {
    let source: EventSource | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let healthy: ReturnType<typeof setTimeout> | undefined;
    let probe: AbortController | null = null;
    let failures = 0;
    let stopped = false;
    const invalidate = () => {
      for (const queryKey of LIVE_KEYS) void queryClient.invalidateQueries({ queryKey });
    };
    const down = () => setState((previous) => (previous.status === "reconnecting" ? previous : { status: "reconnecting", since: Date.now() }));
    const close = () => {
      clearTimeout(healthy);
      source?.close();
      source = null;
    };
    const retryLater = (retryAfterS: number | null) => {
      const wait = reconnectDelay(failures++, retryAfterS);
      if (wait === null) return setState({ status: "offline", since: Date.now() });
      down();
      timer = setTimeout(connect, wait);
    };
    /** After a failure: is the tab still signed in? One request, its answer read for the status only. */
    const checkThenRetry = async () => {
      probe = new AbortController();
      let status: number | null = null;
      let retryAfter: string | null = null;
      try {
        const answer = await fetch(STREAM_URL, { signal: probe.signal, cache: "no-store" });
        status = answer.status;
        retryAfter = answer.headers.get("retry-after");
      } catch {
        // Unreachable: retried like any failure.
      } finally {
        probe.abort();
        probe = null;
      }
      if (stopped) return;
      const outcome = probeOutcome(status, retryAfter);
      if (outcome.kind === "signed-out") setState({ status: "signed-out", since: Date.now() });
      else retryLater(outcome.retryAfterS);
    };
    function connect() {
      if (stopped) return;
      const opened = new EventSource(STREAM_URL);
      source = opened;
      opened.addEventListener("open", () => {
        setState({ status: "live", since: Date.now() });
        healthy = setTimeout(() => (failures = 0), HEALTHY_AFTER_MS);
      });
      opened.addEventListener("hello", (event) => {
        observe((JSON.parse((event as MessageEvent).data) as StreamHello).serverTime);
        // Anything may have changed while we were away.
        invalidate();
      });
      opened.addEventListener("threads", (event) => {
        const message = JSON.parse((event as MessageEvent).data) as StreamThreads;
        observe(message.serverTime);
        // A failed row refetch leaves the rows as they were until the page refetches.
        applyThreadChanges(queryClient, message).catch(() => invalidate());
      });
      opened.addEventListener("limits", (event) => {
        observe((JSON.parse((event as MessageEvent).data) as StreamLimits).serverTime);
        applyNotice(queryClient, queryKeys.limits);
      });
      opened.addEventListener("incidents", (event) => {
        observe((JSON.parse((event as MessageEvent).data) as StreamLimits).serverTime);
        applyNotice(queryClient, queryKeys.incidents);
      });
      // The server ended the stream on purpose: open another with the credentials the tab holds now.
      opened.addEventListener("end", () => {
        close();
        retryLater(null);
      });
      opened.addEventListener("error", () => {
        if (source !== opened) return;
        close();
        down();
        void checkThenRetry();
      });
    }
    connect();
    return () => {
      stopped = true;
      clearTimeout(timer);
      probe?.abort();
      close();
    };
  }, [queryClient, observe]);

  return <LiveContext.Provider value={state}>{children}</LiveContext.Provider>;
}

export function useLiveState(): LiveState {
  return useContext(LiveContext);
}

/** Queries poll only while the live stream is down, and not at all once the tab is signed out. */
export function usePollInterval(): number | false {
  const { status } = useLiveState();
  return status === "live" || status === "signed-out" ? false : POLL_WHEN_DOWN_MS;
}
