import { describe, expect, it } from "vitest";
import { auditQuery } from "@/lib/audit/query";
import { MAX_STORED_INT, MAX_STORED_TIME } from "@/lib/ingest/limits";
import { describeZodError, positiveId, positiveSeq } from "@/lib/validation";
import { parseThreadQuery } from "./filter";

// `from`/`to` of the threads filter and of the audit filter are one parser (`instant`): a time
// neither store holds is the same 400 as any other bad time, naming the parameter, on both stores.
const BAD_TIME = "expected an ISO-8601 time or epoch milliseconds";
const OUT_OF_RANGE = "expected a time between 0001-01-01 and 9999-12-31 (UTC)";

function auditError(search: string): string | null {
  const parsed = auditQuery.safeParse(Object.fromEntries(new URLSearchParams(search)));
  return parsed.success ? null : describeZodError(parsed.error);
}

function threadsError(search: string): string | null {
  const parsed = parseThreadQuery(new URLSearchParams(search));
  return parsed.ok ? null : parsed.error;
}

describe("times in a filter URL", () => {
  it.each([
    ["to=99999999999999999999", `to: ${OUT_OF_RANGE}`],
    [`from=${MAX_STORED_TIME + 1}`, `from: ${OUT_OF_RANGE}`],
    ["from=%2B275760-09-13T00:00:00Z", `from: ${OUT_OF_RANGE}`],
    ["to=-271821-04-20T00:00:00Z", `to: ${OUT_OF_RANGE}`],
    ["from=yesterday", `from: ${BAD_TIME}`],
    [`to=${MAX_STORED_TIME}`, null],
    ["from=1900-01-01T00:00:00Z&to=2026-11-29T12:00:00Z", null],
    ["from=0", null],
  ])("%s → %j", (search, error) => {
    expect(threadsError(search)).toBe(error);
    expect(auditError(search)).toBe(error);
  });

  it("keeps a time within range as epoch milliseconds", () => {
    const parsed = parseThreadQuery(new URLSearchParams(`from=2026-11-29T12:00:00Z&to=${MAX_STORED_TIME}`));
    expect(parsed.ok && parsed.query).toMatchObject({ from: Date.UTC(2026, 10, 29, 12), to: MAX_STORED_TIME });
  });
});

// Numbers that name rows or offsets are bounded by what both stores hold (32-bit ids): beyond it
// a 400 naming the parameter, where PostgreSQL would fail the query.
describe("numbers in a filter URL and in a thread's path", () => {
  it.each([
    [`page=${MAX_STORED_INT}`, null],
    [`page=${MAX_STORED_INT + 1}`, `page: Too big: expected number to be <=${MAX_STORED_INT}`],
    // zod's int check speaks first beyond the safe integers: a 400 all the same.
    ["page=1e300", `page: Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}`],
    ["page=0", "page: Too small: expected number to be >=1"],
  ])("%s → %j", (search, error) => {
    expect(threadsError(search)).toBe(error);
  });

  it.each([
    ["1", 1],
    [String(MAX_STORED_INT), MAX_STORED_INT],
    [String(MAX_STORED_INT + 1), null],
    ["3000000000", null],
    ["0", null],
    ["1.5", null],
    ["abc", null],
  ])("a key %s → %j", (raw, value) => {
    const parsed = positiveId("key").safeParse(raw);
    if (value === null) {
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0].message).toBe(`key: expected a positive integer up to ${MAX_STORED_INT}.`);
    } else {
      expect(parsed.data).toBe(value);
    }
  });
});

describe("an event's seq: 64-bit on both stores", () => {
  it.each([
    ["1", 1],
    ["3000000000", 3_000_000_000],
    ["5000000001", 5_000_000_001],
    [String(Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER],
    ["9007199254740993", null],
    ["0", null],
    ["1.5", null],
    ["abc", null],
  ])("a seq %s → %j", (raw, value) => {
    const parsed = positiveSeq("seq").safeParse(raw);
    if (value === null) expect(parsed.error?.issues[0].message).toBe(`seq: expected a positive integer up to ${Number.MAX_SAFE_INTEGER}.`);
    else expect(parsed.data).toBe(value);
  });
});
