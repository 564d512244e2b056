"use client";

import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from "react";

/**
 * Countdowns tick in the browser from the server's timestamps. The browser's clock may differ
 * from the server's, so every response carries `serverTime` and we keep the offset. Reading
 * Date.now() on every tick (never counting ticks) keeps countdowns right after a tab sleeps.
 */
const ServerClockContext = createContext<{ offsetMs: number; observe: (serverTimeIso: string) => void }>({
  offsetMs: 0,
  observe: () => {},
});

/** Countdowns show whole seconds: a clock offset that moved less than this changes nothing worth a render. */
const OFFSET_JITTER_MS = 500;

export function ServerClockProvider({ children, initialServerTime }: { children: ReactNode; initialServerTime?: string }) {
  const [offsetMs, setOffsetMs] = useState(0);
  const observe = useCallback((serverTimeIso: string) => {
    const server = Date.parse(serverTimeIso);
    if (!Number.isFinite(server)) return;
    // Each reading is off by one response's latency; a new offset re-renders every clock reader
    // (the whole board), so readings within that jitter of the last one are not news.
    const offset = server - Date.now();
    setOffsetMs((previous) => (Math.abs(offset - previous) < OFFSET_JITTER_MS ? previous : offset));
  }, []);
  useEffect(() => {
    if (initialServerTime) observe(initialServerTime);
  }, [initialServerTime, observe]);
  return <ServerClockContext.Provider value={{ offsetMs, observe }}>{children}</ServerClockContext.Provider>;
}

export function useServerClock() {
  return useContext(ServerClockContext);
}

/** The server's "now", re-rendered every `everyMs`. Null until mounted, so SSR and hydration agree. */
export function useServerNow(everyMs = 1000): number | null {
  const { offsetMs } = useServerClock();
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    const update = () => setNow(Date.now() + offsetMs);
    update();
    const timer = setInterval(update, everyMs);
    // Waking from sleep: refresh at once instead of waiting for the next tick.
    document.addEventListener("visibilitychange", update);
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", update);
    };
  }, [offsetMs, everyMs]);
  return now;
}
