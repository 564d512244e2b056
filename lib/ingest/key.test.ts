import { describe, expect, it } from "vitest";
import { deriveKey, earlierKey, keyLookups, statedTime } from "./key";

/**
 * Derived idempotency keys: `<format>@<time>:<sha256>`, the time the line's own in 9 base-36
 * digits, so a unique index of keys grows at its right edge instead of at a random page; a key's
 * earlier form (before keys carried a time) is still looked up, so lines stored then stay known.
 */
const NOW = Date.UTC(2026, 11, 3, 12, 0, 0);
const HASH = /^[0-9a-f]{64}$/;

describe("deriveKey", () => {
  it("puts the line's time first, so keys sort by time whatever their hash", () => {
    const times = [NOW - 86_400_000, NOW - 1, NOW, NOW + 1, NOW + 3_600_000];
    const keys = times.map((t, i) => deriveKey(`material ${times.length - i}`, "canonical", t));
    expect(keys.toSorted()).toEqual(keys);
    expect(keys[2]).toMatch(/^canonical@[0-9a-z]{9}:[0-9a-f]{64}$/);
    expect(keys[2].slice("canonical@".length, "canonical@".length + 9)).toBe(NOW.toString(36).padStart(9, "0"));
  });

  it.each([
    ["no usable time", 0, "000000000"],
    ["a negative time", -5, "000000000"],
    ["not a number", Number.NaN, "000000000"],
    ["a fraction of a millisecond", 1.9, "000000001"],
    ["a time past what 9 digits hold", 36 ** 9 + 5, "zzzzzzzzz"],
  ])("keys %s within its 9 digits", (_case, time, digits) => {
    expect(deriveKey("m", "codex-exec", time)).toBe(`codex-exec@${digits}:${deriveKey("m", "codex-exec", 0).slice(-64)}`);
  });

  it("is the same for the same material and time, and differs with either", () => {
    expect(deriveKey("m", "canonical", NOW)).toBe(deriveKey("m", "canonical", NOW));
    expect(deriveKey("m", "canonical", NOW)).not.toBe(deriveKey("m", "canonical", NOW + 1));
    expect(deriveKey("m", "canonical", NOW).slice(-64)).not.toBe(deriveKey("n", "canonical", NOW).slice(-64));
  });
});

describe("statedTime: a line's own time for its key, the same whenever the line arrives", () => {
  it.each([
    ["epoch ms", NOW, NOW],
    ["epoch ms as text", String(NOW), NOW],
    ["ISO-8601", new Date(NOW).toISOString(), NOW],
    // The receive-time bound of parseEventTime does not apply: a line too far ahead when first sent
    // keeps its key when sent again once it is not.
    ["far in the future", NOW + 10 * 86_400_000, NOW + 10 * 86_400_000],
    ["before 2000", Date.UTC(1999, 0, 1), 0],
    ["garbage", "soon", 0],
    ["absent", undefined, 0],
    ["null", null, 0],
  ])("%s", (_case, value, time) => {
    expect(statedTime(value)).toBe(time);
  });
});

describe("earlierKey and keyLookups", () => {
  const key = deriveKey("m", "claude", NOW);
  const hash = key.slice(-64);

  it("gives a derived key's earlier form, and nothing for any other key", () => {
    expect(hash).toMatch(HASH);
    expect(earlierKey(key)).toBe(`claude:${hash}`);
    expect(earlierKey(`claude:${hash}`)).toBeNull();
    expect(earlierKey("evt-1")).toBeNull();
    expect(earlierKey(`claude@${"0".repeat(9)}:not-a-hash`)).toBeNull();
  });

  it("looks up each key and each derived key's earlier form, and answers in the batch's keys", () => {
    const lookups = keyLookups([key, "evt-1"]);
    expect(lookups.lookup).toEqual([key, "evt-1", `claude:${hash}`]);
    expect(lookups.stored([`claude:${hash}`])).toEqual(new Set([key]));
    expect(lookups.stored(["evt-1", key])).toEqual(new Set(["evt-1", key]));
    expect(lookups.stored([])).toEqual(new Set());
  });
});
