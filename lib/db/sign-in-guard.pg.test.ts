import { describe, expect, it } from "vitest";
import { STORES, useStore } from "@/e2e/support/both-stores";
import { failuresSince, forgetFailures, recentFailures, recordSignInFailure } from "./sign-in-guard";

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

describe.each(STORES)("sign-in failures on %s", (store) => {
  useStore(store);

  it("counts failures after a time per email from an address, per email and per address", async () => {
    await recordSignInFailure({ email: "ada@example.com", address: "10.0.0.1", at: T0 }, T0 - 1000);
    await recordSignInFailure({ email: "ada@example.com", address: "10.0.0.2", at: T0 + 1 }, T0 - 1000);
    await recordSignInFailure({ email: "bob@example.com", address: "10.0.0.1", at: T0 + 2 }, T0 - 1000);
    expect(await recentFailures("ada@example.com", "10.0.0.1", T0 - 1)).toEqual({
      pair: { count: 1, last: T0 },
      account: { count: 2, last: T0 + 1 },
      address: { count: 2, last: T0 + 2 },
      device: { count: 0, last: null },
    });
    // The window slides: what is at or before `since` does not count.
    expect(await recentFailures("ada@example.com", "10.0.0.1", T0)).toEqual({
      pair: { count: 0, last: null },
      account: { count: 1, last: T0 + 1 },
      address: { count: 1, last: T0 + 2 },
      device: { count: 0, last: null },
    });
  });

  it("groups failures by email and address for the People page", async () => {
    expect(await failuresSince(T0 - 1)).toEqual([
      { email: "ada@example.com", address: "10.0.0.1", count: 1, last: T0 },
      { email: "ada@example.com", address: "10.0.0.2", count: 1, last: T0 + 1 },
      { email: "bob@example.com", address: "10.0.0.1", count: 1, last: T0 + 2 },
    ]);
  });

  it("removes failures the window has passed when it keeps one", async () => {
    await recordSignInFailure({ email: "cy@example.com", address: "10.0.0.3", at: T0 + 10 }, T0 + 1);
    expect((await failuresSince(0)).map((f) => f.email)).toEqual(["bob@example.com", "cy@example.com"]);
  });

  it("forgets an email's, an address's, or an email's from one address", async () => {
    await recordSignInFailure({ email: "cy@example.com", address: "10.0.0.1", at: T0 + 11 }, 0);
    expect(await forgetFailures({ email: "cy@example.com", address: "10.0.0.3" })).toBe(1);
    expect(await forgetFailures({ address: "10.0.0.1" })).toBe(2);
    expect(await forgetFailures({ email: "nobody@example.com" })).toBe(0);
    expect(await failuresSince(0)).toEqual([]);
  });
});
