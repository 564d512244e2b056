import { describe, expect, it } from "vitest";
import { auditQuery } from "@/lib/audit/query";
import { MAX_STORED_TIME } from "@/lib/ingest/limits";
import { describeZodError } from "@/lib/validation";
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
