import { describe, expect, it } from "vitest";
import { STORES, useStore } from "@/e2e/support/both-stores";
import { clearGuards, countFailure, guardStates, lockedGuards } from "./sign-in-guard";

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const lockFor = (key: string, failures: number) => (key.startsWith("account:") && failures >= 3 ? 60_000 : null);

describe.each(STORES)("sign-in guards on %s", (store) => {
  useStore(store);

  it("counts failures in a row per key and locks when the rule says so", async () => {
    const keys = ["account:ada@example.com", "address:10.0.0.1"];
    expect(await countFailure(keys, T0, lockFor)).toEqual(new Map([[keys[0], { failures: 1, lockedUntil: null }], [keys[1], { failures: 1, lockedUntil: null }]]));
    await countFailure(keys, T0 + 1, lockFor);
    const third = await countFailure(keys, T0 + 2, lockFor);
    expect(third.get(keys[0])).toEqual({ failures: 3, lockedUntil: T0 + 60_002 });
    expect(third.get(keys[1])).toEqual({ failures: 3, lockedUntil: null });
    expect(await guardStates([...keys, "account:nobody"])).toEqual(third);
  });

  it("lists the keys locked now, in byte order of their keys", async () => {
    for (let i = 0; i < 3; i++) await countFailure(["account:bob", "account:Zed", "account:bob"], T0, lockFor);
    expect(await lockedGuards(T0 + 10)).toEqual([
      { key: "account:Zed", failures: 3, lockedUntil: T0 + 60_000 },
      { key: "account:ada@example.com", failures: 3, lockedUntil: T0 + 60_002 },
      { key: "account:bob", failures: 6, lockedUntil: T0 + 60_000 },
    ]);
    expect(await lockedGuards(T0 + 60_001)).toEqual([{ key: "account:ada@example.com", failures: 3, lockedUntil: T0 + 60_002 }]);
  });

  it("forgets the failures of the keys it clears", async () => {
    expect(await clearGuards(["account:bob", "account:ada@example.com", "account:nobody"])).toBe(2);
    expect(await guardStates(["account:bob", "account:ada@example.com"])).toEqual(new Map());
    expect((await lockedGuards(T0)).map((g) => g.key)).toEqual(["account:Zed"]);
  });
});
