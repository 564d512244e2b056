import { describe, expect, it } from "vitest";
import {
  advanceIncidents,
  detectIncidents,
  incidentId,
  incidentTimeLostMs,
  DEFAULT_INCIDENT_SETTINGS as D,
  type IncidentInput,
  type IncidentNotice,
  type IncidentRecord,
  type SourceIncidentSettings,
} from "./incidents";
import { MIN, SEC } from "./testing";
import type { TroubleKind } from "./types";

const T0 = Date.UTC(2026, 10, 30, 14, 2);

/** A notice of thread `thread` at T0 + `after` on openai · gpt-5.5 unless told otherwise. */
function n(thread: number, after: number, more: Partial<IncidentNotice> = {}): IncidentNotice {
  return { type: "notice", thread, at: T0 + after, kind: "rate_limit", sourceId: "s1", provider: "openai", model: "gpt-5.5", ...more };
}
const ok = (thread: number, after: number): IncidentInput => ({ type: "recovered", thread, at: T0 + after });

type Summary = [kind: TroubleKind, scope: string, threads: number[], start: number, end: number | null, closedBy: string | null];
const summary = (i: IncidentRecord): Summary => [
  i.kind,
  i.sourceId ? `source ${i.sourceId}` : `${i.provider} · ${i.model}`,
  i.threads.map((t) => t.thread),
  i.startedAt - T0,
  i.endedAt === null ? null : i.endedAt - T0,
  i.closedBy,
];

describe("incident detection", () => {
  it.each<[string, IncidentInput[], number, Summary[]]>([
    ["two threads are not an incident", [n(1, 0), n(2, 10 * SEC)], MIN, []],
    ["three threads within the window open one", [n(1, 0), n(2, 10 * SEC), n(3, 30 * SEC)], MIN, [["rate_limit", "openai · gpt-5.5", [1, 2, 3], 0, null, null]]],
    ["one thread's many notices are still one thread", [n(1, 0), n(1, 5 * SEC), n(1, 10 * SEC), n(2, 20 * SEC)], MIN, []],
    ["three threads spread wider than the window open none", [n(1, 0), n(2, 70 * SEC), n(3, 2 * MIN + 1)], 3 * MIN, []],
    [
      "the window slides: the first notice ages out, the next three open it",
      [n(1, 0), n(2, 90 * SEC), n(3, 2 * MIN + 1), n(4, 2 * MIN + 2 * SEC)],
      3 * MIN,
      [["rate_limit", "openai · gpt-5.5", [2, 3, 4], 90 * SEC, null, null]],
    ],
    [
      "it grows while notices keep coming",
      [n(1, 0), n(2, 1 * SEC), n(3, 2 * SEC), n(4, 4 * MIN), n(5, 8 * MIN)],
      9 * MIN,
      [["rate_limit", "openai · gpt-5.5", [1, 2, 3, 4, 5], 0, null, null]],
    ],
    [
      "it closes after the quiet period, ending at its last notice",
      [n(1, 0), n(2, 1 * SEC), n(3, 2 * SEC)],
      2 * SEC + 5 * MIN,
      [["rate_limit", "openai · gpt-5.5", [1, 2, 3], 0, 2 * SEC, "quiet"]],
    ],
    ["not a moment before the quiet period", [n(1, 0), n(2, 1 * SEC), n(3, 2 * SEC)], 2 * SEC + 5 * MIN - 1, [["rate_limit", "openai · gpt-5.5", [1, 2, 3], 0, null, null]]],
    [
      "it closes when all its threads recovered",
      [n(1, 0), n(2, 1 * SEC), n(3, 2 * SEC), ok(1, 30 * SEC), ok(2, 40 * SEC), ok(3, 50 * SEC)],
      MIN,
      [["rate_limit", "openai · gpt-5.5", [1, 2, 3], 0, 50 * SEC, "recovered"]],
    ],
    [
      "a thread that recovers and relapses keeps it open",
      [n(1, 0), n(2, 1 * SEC), n(3, 2 * SEC), ok(1, 30 * SEC), ok(2, 40 * SEC), n(1, 45 * SEC), ok(3, 50 * SEC)],
      MIN,
      [["rate_limit", "openai · gpt-5.5", [1, 2, 3], 0, null, null]],
    ],
    [
      "after all recovered, a new wall is a new incident",
      [n(1, 0), n(2, 1 * SEC), n(3, 2 * SEC), ok(1, 10 * SEC), ok(2, 10 * SEC), ok(3, 10 * SEC), n(1, MIN), n(2, MIN), n(3, MIN)],
      2 * MIN,
      [
        ["rate_limit", "openai · gpt-5.5", [1, 2, 3], 0, 10 * SEC, "recovered"],
        ["rate_limit", "openai · gpt-5.5", [1, 2, 3], MIN, null, null],
      ],
    ],
    [
      "two overlapping incidents on different models",
      [n(1, 0), n(4, 1 * SEC, { model: "gpt-5.4" }), n(2, 2 * SEC), n(5, 3 * SEC, { model: "gpt-5.4" }), n(3, 4 * SEC), n(6, 5 * SEC, { model: "gpt-5.4" })],
      MIN,
      [
        ["rate_limit", "openai · gpt-5.5", [1, 2, 3], 0, null, null],
        ["rate_limit", "openai · gpt-5.4", [4, 5, 6], 1 * SEC, null, null],
      ],
    ],
    ["different kinds on one model are different walls", [n(1, 0), n(2, 1 * SEC, { kind: "capacity" }), n(3, 2 * SEC)], MIN, []],
    [
      "usage limits group by source, whatever the model",
      [
        n(1, 0, { kind: "usage_limit", model: "gpt-5.5" }),
        n(2, 1 * SEC, { kind: "usage_limit", model: "gpt-5.4", provider: "openai" }),
        n(3, 2 * SEC, { kind: "usage_limit", model: null, provider: null }),
        n(4, 3 * SEC, { kind: "usage_limit", sourceId: "s2" }),
      ],
      MIN,
      [["usage_limit", "source s1", [1, 2, 3], 0, null, null]],
    ],
  ])("%s", (_name, inputs, now, expected) => {
    expect(detectIncidents(inputs, T0 + now).map(summary)).toEqual(expected);
  });

  it.each<[string, number, number, IncidentInput[], number]>([
    ["a lower threshold opens on two threads", 2, 2 * MIN, [n(1, 0), n(2, 10 * SEC)], 1],
    ["a higher threshold needs more threads", 5, 2 * MIN, [n(1, 0), n(2, 1), n(3, 2), n(4, 3)], 0],
    ["a narrower window misses a slower burst", 3, 30 * SEC, [n(1, 0), n(2, 20 * SEC), n(3, 40 * SEC)], 0],
    ["a wider window catches it", 3, 60 * SEC, [n(1, 0), n(2, 20 * SEC), n(3, 40 * SEC)], 1],
  ])("%s", (_name, minThreads, windowMs, inputs, count) => {
    expect(detectIncidents(inputs, T0 + MIN, { ...D, minThreads, windowMs })).toHaveLength(count);
  });

  it.each<[string, [string, SourceIncidentSettings][], IncidentInput[], number]>([
    ["absent settings are the global ones: two threads are not enough", [], [n(1, 0), n(2, 10 * SEC)], 0],
    ["a source with minThreads 2 opens on two threads while the default needs three", [["s1", { minThreads: 2 }]], [n(1, 0), n(2, 10 * SEC)], 1],
    ["another source's setting does not apply to this one", [["s2", { minThreads: 2 }]], [n(1, 0), n(2, 10 * SEC)], 0],
    ["a source's narrower window misses a slower burst", [["s1", { windowMs: 30 * SEC }]], [n(1, 0), n(2, 20 * SEC), n(3, 40 * SEC)], 0],
    ["a source's wider window catches a burst the global one misses", [["s1", { windowMs: 3 * MIN }]], [n(1, 0), n(2, 70 * SEC), n(3, 2 * MIN + 1)], 1],
    [
      "a mixed scope opens at the smallest minThreads among its sources",
      [["s2", { minThreads: 2 }]],
      [n(1, 0), n(2, 10 * SEC, { sourceId: "s2" })],
      1,
    ],
    [
      "a mixed scope opens the same whichever source's notice came first",
      [["s2", { minThreads: 2 }]],
      [n(2, 0, { sourceId: "s2" }), n(1, 10 * SEC)],
      1,
    ],
    [
      "a mixed scope keeps notices for the largest window among its sources",
      [["s2", { windowMs: 3 * MIN }]],
      [n(1, 0, { sourceId: "s2" }), n(2, 70 * SEC), n(3, 2 * MIN + 1)],
      1,
    ],
    [
      "a source that is not in the scope lends it nothing",
      [["s3", { minThreads: 2, windowMs: 3 * MIN }]],
      [n(1, 0, { sourceId: "s2" }), n(2, 10 * SEC)],
      0,
    ],
    [
      "usage limits follow their own source's settings",
      [["s2", { minThreads: 2 }]],
      [n(1, 0, { kind: "usage_limit", sourceId: "s2" }), n(2, 1 * SEC, { kind: "usage_limit", sourceId: "s2" }), n(3, 2 * SEC, { kind: "usage_limit" }), n(4, 3 * SEC, { kind: "usage_limit" })],
      1,
    ],
  ])("%s", (_name, bySource, inputs, count) => {
    expect(detectIncidents(inputs, T0 + 3 * MIN, D, new Map(bySource))).toHaveLength(count);
  });

  it("counts notices, keeps the latest reset and a stable id from scope and start", () => {
    const [incident] = detectIncidents([n(1, 0, { resetAt: T0 + 20 * MIN }), n(2, 1 * SEC, { resetAt: T0 + 28 * MIN }), n(3, 2 * SEC), n(3, 3 * SEC)], T0 + MIN);
    expect(incident.notices).toBe(4);
    expect(incident.resetAt).toBe(T0 + 28 * MIN);
    expect(incident.id).toBe(incidentId({ kind: "rate_limit", provider: "openai", model: "gpt-5.5", sourceId: null }, T0));
    expect(incident.threads.find((t) => t.thread === 3)).toMatchObject({ notices: 2, firstNoticeAt: T0 + 2 * SEC, lastNoticeAt: T0 + 3 * SEC });
  });

  it("gives the same incidents whether the notices come one by one or in one batch", () => {
    const inputs = [n(1, 0), n(2, 1 * SEC), n(3, 2 * SEC), ok(1, 20 * SEC), n(4, 30 * SEC)];
    const batched = advanceIncidents([], inputs, T0 + MIN, D);
    expect(batched.active.filter((i) => i.state === "open")).toEqual(detectIncidents(inputs, T0 + MIN));
  });

  it("never changes the incidents it is given: the store hands the same lists to every fold until they change", () => {
    const open = advanceIncidents([], [n(1, 0), n(2, 1 * SEC), n(3, 2 * SEC)], T0 + 2 * SEC, D).active;
    const forming = advanceIncidents([], [n(7, 0, { model: "o9" })], T0, D).active;
    const given = [...open, ...forming];
    const before = structuredClone(given);
    // A notice, a recovery that closes nothing, a relapse, a new thread, a forming group aged out, then quiet.
    advanceIncidents(given, [n(1, 10 * SEC), ok(2, 20 * SEC), n(2, 30 * SEC), n(4, 40 * SEC)], T0 + 3 * MIN, D);
    advanceIncidents(given, [ok(1, 10 * SEC), ok(2, 10 * SEC), ok(3, 10 * SEC)], T0 + 20 * SEC, D);
    advanceIncidents(given, [], T0 + 10 * MIN, D);
    expect(given).toEqual(before);
  });

  it("reports forming groups that aged out as removed", () => {
    const first = advanceIncidents([], [n(1, 0)], T0, D);
    expect(first.active.map((i) => i.state)).toEqual(["forming"]);
    const later = advanceIncidents(first.active, [], T0 + 3 * MIN, D);
    expect(later).toMatchObject({ active: [], removed: [first.active[0].id] });
  });

  it("time lost runs per thread from its first notice to its recovery or the end", () => {
    const [incident] = detectIncidents([n(1, 0), n(2, 10 * SEC), n(3, 20 * SEC), ok(1, 30 * SEC)], T0 + MIN);
    expect(incidentTimeLostMs(incident, T0 + MIN)).toBe(30 * SEC + 50 * SEC + 40 * SEC);
  });
});
