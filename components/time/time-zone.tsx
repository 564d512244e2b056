"use client";

import { createContext, useContext, useEffect, useState, type ReactNode } from "react";

/** Times are stored and sent in UTC; each browser chooses to read them in UTC or local time. */
export type TimeZoneMode = "utc" | "local";
const STORAGE_KEY = "radar.timeZone";

const TimeZoneContext = createContext<{ mode: TimeZoneMode; setMode: (mode: TimeZoneMode) => void }>({
  mode: "utc",
  setMode: () => {},
});

export function TimeZoneProvider({ children }: { children: ReactNode }) {
  const [mode, setModeState] = useState<TimeZoneMode>("utc");
  useEffect(() => {
    const saved = window.localStorage.getItem(STORAGE_KEY);
    if (saved === "local" || saved === "utc") setModeState(saved);
  }, []);
  const setMode = (next: TimeZoneMode) => {
    window.localStorage.setItem(STORAGE_KEY, next);
    setModeState(next);
  };
  return <TimeZoneContext.Provider value={{ mode, setMode }}>{children}</TimeZoneContext.Provider>;
}

export function useTimeZone() {
  return useContext(TimeZoneContext);
}
