import { afterEach, describe, expect, it, vi } from "vitest";
import { within } from "./within";

/** Bounded waits, on the injected clock. */
describe("within", () => {
  afterEach(() => vi.useRealTimers());

  it("answers the value of work that ends in time", async () => {
    await expect(within(Promise.resolve(7), 1_000)).resolves.toEqual({ settled: true, value: 7 });
  });

  it("answers not settled once the time runs out, and the work goes on unwatched", async () => {
    vi.useFakeTimers();
    let finish!: (value: string) => void;
    const work = new Promise<string>((resolve) => (finish = resolve));
    const waited = within(work, 1_000);
    await vi.advanceTimersByTimeAsync(999);
    let answered = false;
    void waited.then(() => (answered = true));
    await Promise.resolve();
    expect(answered).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(waited).resolves.toEqual({ settled: false });
    finish("late");
    await expect(work).resolves.toBe("late");
  });

  it("rejects with the work's own error when it fails in time, and leaves no timer behind", async () => {
    vi.useFakeTimers();
    await expect(within(Promise.reject(new Error("refused")), 1_000)).rejects.toThrow("refused");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a work that fails after the time ran out is no unhandled rejection", async () => {
    vi.useFakeTimers();
    let fail!: (error: Error) => void;
    const work = new Promise<never>((_, reject) => (fail = reject));
    const waited = within(work, 10);
    await vi.advanceTimersByTimeAsync(10);
    await expect(waited).resolves.toEqual({ settled: false });
    fail(new Error("too late to matter"));
    await vi.advanceTimersByTimeAsync(0);
  });
});
