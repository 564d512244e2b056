"use client";

import { useTimeZone } from "./time-zone";

export function TimeZoneSwitch() {
  const { mode, setMode } = useTimeZone();
  return (
    <fieldset className="flex items-center gap-1 text-xs" data-testid="tz-switch">
      <legend className="sr-only">Show times in</legend>
      {(["utc", "local"] as const).map((option) => (
        <label
          key={option}
          className={`cursor-pointer rounded px-2 py-1 ring-1 ring-slate-300 has-[:focus-visible]:outline-2 has-[:focus-visible]:outline-sky-600 ${
            mode === option ? "bg-slate-800 text-white" : "bg-white text-slate-700"
          }`}
        >
          <input
            type="radio"
            name="tz"
            value={option}
            checked={mode === option}
            onChange={() => setMode(option)}
            className="sr-only"
          />
          {option === "utc" ? "UTC" : "Local"}
        </label>
      ))}
    </fieldset>
  );
}
