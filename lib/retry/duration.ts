/**
 * Durations as people write and read them: one parser and the named ways the product spells a
 * duration. Pure: the engine's notes, the dashboard and the relay all use this module.
 */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const UNITS = "(?:ms|milliseconds?|msecs?|h|hours?|hrs?|m|mins?|minutes?|s|secs?|seconds?)(?![a-z])";

/** One number with its unit ("1.5s", "2 minutes"); a duration is one or more of these ("6m0s"). */
export const DURATION_PART = `\\d+(?:\\.\\d+)?\\s*${UNITS}`;
const PART_CAPTURE = new RegExp(`(\\d+(?:\\.\\d+)?)\\s*(${UNITS})`, "gi");
const DURATION_ONLY = new RegExp(`^(?:\\s*${DURATION_PART})+\\s*$`, "i");

/**
 * "6m0s", "1.5s", "20ms", "1h2m", "2 seconds" in milliseconds; null when unparseable. A bare
 * number is in `bareUnit`: seconds where providers write durations (headers, messages),
 * milliseconds on the relay's command line.
 */
export function parseDuration(text: string, bareUnit: "s" | "ms" = "s"): number | null {
  const trimmed = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) return Number(trimmed) * UNIT_MS[bareUnit];
  if (!DURATION_ONLY.test(trimmed)) return null;
  let total = 0;
  for (const match of trimmed.matchAll(PART_CAPTURE)) total += Number(match[1]) * UNIT_MS[unitOf(match[2])];
  return total;
}

function unitOf(unit: string): string {
  const u = unit.toLowerCase();
  if (u.startsWith("ms") || u.startsWith("milli")) return "ms";
  return u[0];
}

/*
 * The spellings below differ on purpose, each fitting where it is read; they are kept identical
 * to what their readers (and tests) have always seen.
 */

/** "250 ms", "1.25 s", "2.5 min": the engine's notes and reasons (precise, one unit). */
export function noteDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Number((ms / 1000).toFixed(2))} s`;
  return `${Number((ms / 60_000).toFixed(1))} min`;
}

/** "0:43", "12:05", "1:02:03": the dashboard's countdowns. */
export function clockDuration(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const ss = String(seconds).padStart(2, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${ss}` : `${minutes}:${ss}`;
}

/** "1.8 s", "250 ms", "5 min", "1 h 2 min": the dashboard's delays, gaps and time lost. */
export function humanDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  if (abs < 60_000) return `${(abs / 1000).toFixed(abs < 10_000 ? 1 : 0).replace(/\.0$/, "")} s`;
  if (abs < 3_600_000) {
    const minutes = Math.floor(abs / 60_000);
    const seconds = Math.round((abs % 60_000) / 1000);
    return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
  }
  const hours = Math.floor(abs / 3_600_000);
  const minutes = Math.round((abs % 3_600_000) / 60_000);
  return minutes ? `${hours} h ${minutes} min` : `${hours} h`;
}

/** "4s", "1.5s", "250ms", "2m 5s": the relay's terse log lines, written like its own options. */
export function compactDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 10_000) return `${Math.round(ms / 100) / 10}s`;
  if (ms < 60_000) return `${Math.round(ms / 1000)}s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return s ? `${m}m ${s}s` : `${m}m`;
}
