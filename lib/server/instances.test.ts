import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { decodeNotice, encodeNotice, type LiveNotice } from "@/lib/db/postgres/live-keys";
import { recoveringPublisher } from "./instances";

/** Notifications to the other instances that fail are made up for by one resync notice. */
describe("recoveringPublisher", () => {
  let up: boolean;
  let sent: string[];
  let errors: number;
  let send: (publication: () => Promise<void>) => void;
  const notify = (what: string) => async () => {
    if (!up) throw new Error("the database is away");
    sent.push(what);
  };

  beforeEach(() => {
    vi.useFakeTimers();
    up = true;
    sent = [];
    errors = 0;
    send = recoveringPublisher(async (notice: LiveNotice) => notify(notice.type)(), { onError: () => errors++, retryMs: 100, maxRetryMs: 400 });
  });
  afterEach(() => vi.useRealTimers());

  it("sends as usual while the database answers, and never a resync", async () => {
    send(notify("a"));
    send(notify("b"));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sent).toEqual(["a", "b"]);
    expect(errors).toBe(0);
  });

  it("after failures, the next successful publication is followed by one resync", async () => {
    up = false;
    send(notify("lost-1"));
    send(notify("lost-2"));
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toBe(2);
    up = true;
    send(notify("c"));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual(["c", "resync"]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sent).toEqual(["c", "resync"]);
  });

  it("with nothing else to publish, a retry timer (with backoff) sends the resync once the database is back", async () => {
    up = false;
    send(notify("lost"));
    await vi.advanceTimersByTimeAsync(100); // first retry: still down
    await vi.advanceTimersByTimeAsync(200); // second: still down
    expect(sent).toEqual([]);
    expect(errors).toBe(3);
    up = true;
    await vi.advanceTimersByTimeAsync(400);
    expect(sent).toEqual(["resync"]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sent).toEqual(["resync"]);
  });

  it("keeps nothing of what failed: a long outage costs one resync, however many publications it lost", async () => {
    up = false;
    for (let i = 0; i < 10_000; i++) send(notify(`lost-${i}`));
    await vi.advanceTimersByTimeAsync(10_000);
    up = true;
    await vi.advanceTimersByTimeAsync(400);
    expect(sent).toEqual(["resync"]);
  });

  it("the resync notice travels like the others", () => {
    expect(decodeNotice(encodeNotice("a", { type: "resync" }))).toEqual({ origin: "a", notice: { type: "resync" } });
  });

  it("a change of credentials travels with whom it concerns", () => {
    for (const kind of ["person", "sessions", "session", "key"] as const) {
      expect(decodeNotice(encodeNotice("a", { type: "principals", kind, id: "x;y" }))).toEqual({ origin: "a", notice: { type: "principals", kind, id: "x;y" } });
    }
    expect(decodeNotice("a;principals;nobody;x")).toBeNull();
  });
});
