import { describe, expect, it } from "vitest";
import { STORES, useStore } from "@/e2e/support/both-stores";
import { readSetting, settingOrCreate, takeSetting, writeSetting } from "./settings";

describe.each(STORES)("settings on %s", (store) => {
  useStore(store);

  it("keeps the first caller's value, even when several ask at once", async () => {
    const values = await Promise.all(["a", "b", "c"].map((v) => settingOrCreate("secret", () => v, 1_000)));
    expect(new Set(values).size).toBe(1);
    expect(await settingOrCreate("secret", () => "later")).toBe(values[0]);
    expect(await readSetting("secret")).toBe(values[0]);
  });

  it("reads null for a missing key, and what was last written", async () => {
    expect(await readSetting("missing")).toBeNull();
    await writeSetting("k", "one", 1_000);
    await writeSetting("k", "two", 2_000);
    expect(await readSetting("k")).toBe("two");
  });

  it("takes a one-time value once, and only with its value", async () => {
    await writeSetting("code", "123456");
    expect(await takeSetting("code", "000000")).toBe(false);
    const taken = await Promise.all([takeSetting("code", "123456"), takeSetting("code", "123456")]);
    expect(taken.filter(Boolean)).toHaveLength(1);
    expect(await readSetting("code")).toBeNull();
  });
});
