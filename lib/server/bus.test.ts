import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  COALESCE_MS,
  publishDirectivesPending,
  publishIncidentsChanged,
  publishPrincipalsChanged,
  publishResync,
  publishThreadChanges,
  receivedDirectivesPending,
  receivedNotice,
  receivedPrincipalsChanged,
  receivedThreadChanges,
  relayTo,
  subscribe,
  type NoticeType,
  type PrincipalsChanged,
  type ThreadChange,
  type ThreadsChanged,
} from "./bus";

/** The live-update protocol's publication side: changed keys, coalesced with a leading edge. */
describe("thread changes on the bus", () => {
  let received: ThreadsChanged["threads"][];
  let unsubscribe: () => void;
  beforeEach(() => {
    vi.useFakeTimers();
    received = [];
    unsubscribe = subscribe("threads", (message) => received.push(message.threads));
  });
  afterEach(() => {
    unsubscribe();
    // Close any window a test left open.
    vi.runAllTimers();
    vi.useRealTimers();
  });

  it("the first change after a quiet spell goes out at once (leading edge)", () => {
    publishThreadChanges([{ key: 1, reorder: false }]);
    expect(received).toEqual([[{ key: 1, reorder: false }]]);
  });
  it("changes within the window are merged by key into one publication at its end", () => {
    publishThreadChanges([{ key: 1, reorder: false }]);
    publishThreadChanges([{ key: 2, reorder: false }, { key: 3, reorder: false }]);
    publishThreadChanges([{ key: 2, reorder: true }]);
    expect(received).toHaveLength(1);
    vi.advanceTimersByTime(COALESCE_MS);
    expect(received).toEqual([[{ key: 1, reorder: false }], [{ key: 2, reorder: true }, { key: 3, reorder: false }]]);
  });
  it("a steady stream costs one publication per window, however many batches it holds", () => {
    for (let i = 0; i < 100; i++) {
      publishThreadChanges([{ key: i % 7, reorder: false }]);
      vi.advanceTimersByTime(COALESCE_MS / 10);
    }
    vi.advanceTimersByTime(COALESCE_MS);
    expect(received.length).toBeLessThanOrEqual(12);
    expect(new Set(received.flat().map((c) => c.key))).toEqual(new Set([0, 1, 2, 3, 4, 5, 6]));
  });
  it("after a quiet window the next change goes out at once again", () => {
    publishThreadChanges([{ key: 1, reorder: false }]);
    vi.advanceTimersByTime(COALESCE_MS);
    publishThreadChanges([{ key: 2, reorder: true }]);
    expect(received).toEqual([[{ key: 1, reorder: false }], [{ key: 2, reorder: true }]]);
  });
  it("nothing is published for an empty change list", () => {
    publishThreadChanges([]);
    expect(received).toEqual([]);
  });
  it("directive publications are never held back", () => {
    const sources: string[] = [];
    const off = subscribe("directives", (message) => sources.push(message.sourceId));
    publishThreadChanges([{ key: 1, reorder: false }]);
    publishDirectivesPending("s1");
    publishDirectivesPending("s1");
    off();
    expect(sources).toEqual(["s1", "s1"]);
  });
});

/** Several instances (lib/server/instances.ts): what this process publishes is relayed, what others published is not. */
describe("the bus across instances", () => {
  let relayed: { threads: ThreadChange[][]; notices: NoticeType[]; directives: string[] };
  let local: { threads: ThreadChange[][]; incidents: number; directives: string[]; resyncs: number };
  let offs: (() => void)[];
  let relayedPrincipals: Omit<PrincipalsChanged, "type">[];
  beforeEach(() => {
    vi.useFakeTimers();
    relayed = { threads: [], notices: [], directives: [] };
    relayedPrincipals = [];
    relayTo({
      threads: (changes) => relayed.threads.push(changes),
      notice: (type) => relayed.notices.push(type),
      directives: (sourceId) => relayed.directives.push(sourceId),
      principals: (change) => relayedPrincipals.push(change),
    });
    local = { threads: [], incidents: 0, directives: [], resyncs: 0 };
    offs = [
      subscribe("threads", (message) => local.threads.push(message.threads)),
      subscribe("incidents", () => local.incidents++),
      subscribe("directives", (message) => local.directives.push(message.sourceId)),
      subscribe("resync", () => local.resyncs++),
    ];
  });
  afterEach(() => {
    for (const off of offs) off();
    vi.runAllTimers();
    relayTo(null);
    vi.useRealTimers();
  });

  it("relays this process's publications, coalesced like its own subscribers' (one per window)", () => {
    publishThreadChanges([{ key: 1, reorder: false }]);
    publishThreadChanges([{ key: 2, reorder: true }]);
    publishThreadChanges([{ key: 1, reorder: true }]);
    publishIncidentsChanged();
    publishIncidentsChanged();
    publishDirectivesPending("s1");
    expect(relayed).toEqual({ threads: [[{ key: 1, reorder: false }]], notices: ["incidents"], directives: ["s1"] });
    vi.advanceTimersByTime(COALESCE_MS);
    expect(relayed.threads).toEqual([[{ key: 1, reorder: false }], [{ key: 2, reorder: true }, { key: 1, reorder: true }]]);
    expect(relayed.notices).toEqual(["incidents", "incidents"]);
    expect(local.threads).toEqual(relayed.threads);
  });

  it("gives other instances' publications to this process's subscribers only, never relaying them back", () => {
    receivedThreadChanges([{ key: 7, reorder: true }]);
    receivedNotice("incidents");
    receivedDirectivesPending("s2");
    vi.advanceTimersByTime(COALESCE_MS);
    expect(local).toEqual({ threads: [[{ key: 7, reorder: true }]], incidents: 1, directives: ["s2"], resyncs: 0 });
    expect(relayed).toEqual({ threads: [], notices: [], directives: [] });
  });

  it("a resync reaches every subscriber at once", () => {
    publishResync();
    expect(local.resyncs).toBe(1);
    expect(relayed.threads).toEqual([]);
  });

  it("a change of credentials reaches this process at once, uncoalesced, and is relayed; another instance's is not relayed back", () => {
    const heard: PrincipalsChanged[] = [];
    offs.push(subscribe("principals", (message) => heard.push(message)));
    publishPrincipalsChanged({ kind: "key", id: "k1" });
    publishPrincipalsChanged({ kind: "key", id: "k1" });
    publishPrincipalsChanged({ kind: "person", id: "p1" });
    expect(heard).toEqual([
      { type: "principals", kind: "key", id: "k1" },
      { type: "principals", kind: "key", id: "k1" },
      { type: "principals", kind: "person", id: "p1" },
    ]);
    expect(relayedPrincipals).toEqual([{ kind: "key", id: "k1" }, { kind: "key", id: "k1" }, { kind: "person", id: "p1" }]);
    receivedPrincipalsChanged({ kind: "sessions", id: "p2" });
    expect(heard.at(-1)).toEqual({ type: "principals", kind: "sessions", id: "p2" });
    expect(relayedPrincipals).toHaveLength(3);
  });
});
