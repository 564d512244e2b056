import { describe, expect, it } from "vitest";
import type { IncidentRecord } from "@/lib/retry/incidents";
import { alertBody } from "./body";
import { conditionChanges, currentConditions, incidentAlerts, nextUsualGap, threadAlerts, type BlindSettings, type Observations } from "./rules";

const now = Date.parse("2026-12-04T12:00:00Z");
const settings: BlindSettings = { silenceFloorMs: 60_000, silenceFactor: 3, pollGapMs: 120_000, stopGraceMs: 60_000, backlogMs: 300_000 };
const nothing: Observations = { sources: [], stops: [], oldestPendingAt: null, limits: [] };

const incident = (id: string, state: IncidentRecord["state"], over: Partial<IncidentRecord> = {}): IncidentRecord => ({
  id,
  state,
  kind: "capacity",
  provider: "openai",
  model: "gpt-5.5",
  sourceId: null,
  startedAt: now - 60_000,
  lastNoticeAt: now,
  endedAt: state === "closed" ? now : null,
  closedBy: state === "closed" ? "quiet" : null,
  notices: 3,
  resetAt: null,
  threads: [1, 2, 3].map((thread) => ({ thread, firstNoticeAt: now - 60_000, lastNoticeAt: now, notices: 1, recoveredAt: null })),
  ...over,
});

describe("incident alerts", () => {
  it.each([
    ["an incident that opens", new Set<string>(), [incident("inc-a", "open")], ["incident.opened:inc-a"]],
    ["an open incident that grows raises nothing", new Set(["inc-a"]), [incident("inc-a", "open")], []],
    ["a forming group raises nothing", new Set<string>(), [incident("forming:x", "forming")], []],
    ["an incident that closes", new Set(["inc-a"]), [incident("inc-a", "closed")], ["incident.closed:inc-a"]],
    ["an incident that opens and closes in one step", new Set<string>(), [incident("inc-a", "closed")], ["incident.opened:inc-a", "incident.closed:inc-a"]],
    ["two incidents at once", new Set(["inc-a"]), [incident("inc-a", "closed"), incident("inc-b", "open")], ["incident.closed:inc-a", "incident.opened:inc-b"]],
  ])("%s", (_label, before, changed, keys) => expect(incidentAlerts(before, changed, now).map((a) => a.key)).toEqual(keys));

  it("names a usage-limit incident by its source", () => {
    const [alert] = incidentAlerts(new Set(), [incident("inc-u", "open", { kind: "usage_limit", provider: null, model: null, sourceId: "s1" })], now, new Map([["s1", "laptop"]]));
    expect(alert.text).toContain("source laptop");
    expect(alert.path).toBe("/incidents/inc-u");
  });
});

describe("thread alerts", () => {
  const t = { key: 7, externalId: "th-7", title: null, lastSeq: 12 };
  it.each([
    ["turns stalled", "retrying", "stalled", ["thread.stalled:7:12"]],
    ["turns exhausted", "retrying", "exhausted", ["thread.exhausted:7:12"]],
    ["turns broken", "stopping", "broken", ["thread.broken:7:12"]],
    ["stays stalled", "stalled", "stalled", []],
    ["recovers", "stalled", "running", []],
  ])("%s", (_label, statusBefore, status, keys) => expect(threadAlerts([{ ...t, statusBefore, status }], now).map((a) => a.key)).toEqual(keys));
});

describe("conditions", () => {
  const source = { id: "s1", name: "laptop", lastSeenAt: now - 30_000, usualGapMs: 10_000, lastPolledAt: null };
  it.each([
    ["a source quiet within its allowance", { ...nothing, sources: [source] }, []],
    ["a source quiet past the floor but within three usual gaps", { ...nothing, sources: [{ ...source, lastSeenAt: now - 70_000, usualGapMs: 30_000 }] }, []],
    ["a source quiet past both", { ...nothing, sources: [{ ...source, lastSeenAt: now - 100_000, usualGapMs: 30_000 }] }, ["source.silent:s1"]],
    ["a source never seen", { ...nothing, sources: [{ ...source, lastSeenAt: null }] }, []],
    ["a relay that polls", { ...nothing, sources: [{ ...source, lastPolledAt: now - 30_000 }] }, []],
    ["a relay that stopped polling", { ...nothing, sources: [{ ...source, lastPolledAt: now - 130_000 }] }, ["relay.silent:s1"]],
    ["a fresh stop", { ...nothing, stops: [{ id: "d1", thread: "th", source: "laptop", createdAt: now - 10_000 }] }, []],
    ["a stop past its grace", { ...nothing, stops: [{ id: "d1", thread: "th", source: "laptop", createdAt: now - 61_000 }] }, ["stop.unacknowledged:d1"]],
    ["an outbox backing up", { ...nothing, oldestPendingAt: now - 301_000 }, ["outbox.backlog"]],
    ["a limit window above the threshold", { ...nothing, limits: [{ sourceId: "s1", source: "laptop", provider: "openai", account: "", window: "five_hour", usedPercent: 91 }] }, ["limit.above:90:s1||openai|five_hour"]],
    ["a limit window below it", { ...nothing, limits: [{ sourceId: "s1", source: "laptop", provider: "openai", account: "", window: "five_hour", usedPercent: 50 }] }, []],
  ])("%s", (_label, observed, keys) => expect(currentConditions(observed, settings, [90], now).map((c) => c.key)).toEqual(keys));

  it("raises once, stays quiet while it holds, clears once", () => {
    const silent = currentConditions({ ...nothing, sources: [{ ...source, lastSeenAt: now - 100_000 }] }, settings, [], now);
    const first = conditionChanges([], silent, now);
    expect(first.raise.map((a) => [a.key, a.state])).toEqual([[`source.silent:s1:raised@${now}`, "raised"]]);
    const raised = first.started.map((c) => ({ key: c.key, event: c.event, subject: c.subject, raisedAt: now }));
    expect(conditionChanges(raised, silent, now + 5_000)).toMatchObject({ raise: [], clear: [] });
    const back = conditionChanges(raised, [], now + 9_000);
    expect(back.clear.map((a) => [a.key, a.state])).toEqual([[`source.silent:s1:cleared@${now}`, "cleared"]]);
    expect(back.ended).toEqual(["source.silent:s1"]);
  });

  it("keeps a limit condition's threshold when it clears", () => {
    const raised = [{ key: "limit.above:90:s1||openai|five_hour", event: "limit.above" as const, subject: "laptop", raisedAt: now }];
    expect(conditionChanges(raised, [], now).clear[0].threshold).toBe(90);
  });

  it.each([
    ["the first gap", null, 10_000, 10_000],
    ["slowly", 10_000, 60_000, 20_000],
    ["not from a silence", 10_000, 61_000, 10_000],
    ["not from a silence, even first", null, 61_000, null],
  ])("learns the usual gap %s", (_label, usual, gap, expected) => expect(nextUsualGap(usual, gap, settings)).toBe(expected));
});

describe("bodies", () => {
  const [alert] = incidentAlerts(new Set(), [incident("inc-a", "open")], now);
  it("generic JSON carries the outbox id and an absolute link", () => {
    expect(JSON.parse(alertBody("json", alert, 42, "https://radar.example.com"))).toMatchObject({ id: 42, event: "incident.opened", state: "fired", url: "https://radar.example.com/incidents/inc-a" });
  });
  it("Slack gets text with a link", () => {
    expect(JSON.parse(alertBody("slack", alert, 42, "https://radar.example.com")).text).toMatch(/^:rotating_light: Incident opened: capacity — openai · gpt-5.5 — 3 threads .* <https:\/\/radar.example.com\/incidents\/inc-a\|open>$/);
  });
});
