/**
 * Event-time parsing for canonical `at`, the `{at, message}` wrapper and Codex `emittedAtMs`.
 * Accepts an ISO-8601 string (a date-time without zone is read as UTC) or epoch milliseconds
 * (a number, or a string of digits). Rejects unparseable values and absurd ones: before
 * 2000-01-01 or more than one day after the receive time.
 */

import { MAX_STORED_TIME } from "./limits";

export const MIN_EVENT_TIME = Date.UTC(2000, 0, 1);
export const MAX_FUTURE_MS = 24 * 60 * 60 * 1000;

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/;

export type TimeResult = { ok: true; at: number } | { ok: false; message: string };

function parseIso(text: string): number | null {
  const m = ISO.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = h === undefined ? 0 : Number(h);
  const minute = mi === undefined ? 0 : Number(mi);
  const second = s === undefined ? 0 : Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null;
  const ms = frac === undefined ? 0 : Math.floor(Number(`0.${frac}`) * 1000);
  let t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  // Reject calendar overflow (2025-02-30).
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return null;
  if (zone && zone !== "Z" && zone !== "z") {
    const sign = zone[0] === "-" ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    const offH = Number(digits.slice(0, 2));
    const offM = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (offH > 23 || offM > 59) return null;
    t -= sign * (offH * 60 + offM) * 60_000;
  }
  return t;
}

/** Parse and sanity-check an event time. `message` is meant to follow "<field>: ". */
export function parseEventTime(value: unknown, receivedAt: number): TimeResult {
  let at: number;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return { ok: false, message: "expected an ISO-8601 string or epoch milliseconds" };
    at = value;
  } else if (typeof value === "string") {
    const text = value.trim();
    if (/^\d+(\.\d+)?$/.test(text)) {
      at = Number(text);
    } else {
      const parsed = parseIso(text);
      if (parsed === null) return { ok: false, message: `not a valid ISO-8601 time or epoch milliseconds: ${JSON.stringify(value.slice(0, 60))}` };
      at = parsed;
    }
  } else {
    return { ok: false, message: "expected an ISO-8601 string or epoch milliseconds" };
  }
  if (at < MIN_EVENT_TIME) {
    const hint = at > 0 && at < 1e11 ? " (looks like epoch seconds; epoch milliseconds expected)" : "";
    return { ok: false, message: `time before 2000-01-01 is not plausible${hint}` };
  }
  if (at > receivedAt + MAX_FUTURE_MS) {
    // A Date cannot even be written beyond year 275760: such a time is named as given.
    const when = at <= MAX_STORED_TIME ? new Date(at).toISOString() : String(value);
    return { ok: false, message: `time ${when} is more than 1 day after the receive time` };
  }
  return { ok: true, at: Math.round(at) };
}
