import { describe, expect, it } from "vitest";
import { normalizeBatch } from "./batch";
import { parseBody, TooManyItemsError } from "./body";
import { MAX_DEPTH, MAX_ID_CHARS, MAX_ITEMS, MAX_RAW_CHARS, MAX_STRING_CHARS } from "./limits";

const NOW = Date.UTC(2026, 10, 29, 12);

function nested(depth: number): unknown {
  let value: unknown = {};
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

describe("ingestion bounds", () => {
  it("rejects a line nested too deep before anything walks it, keeping the others", () => {
    for (const format of ["canonical", "codex", "codex-exec", "claude"] as const) {
      const good = format === "canonical" ? { threadId: "t1", type: "progress" } : { type: "system", subtype: "init", session_id: "t1", method: "thread/started", params: { thread: { id: "t1" } } };
      const deep = { ...good, extra: nested(5_000) };
      const r = normalizeBatch(format, [deep, good], { receivedAt: NOW, threadId: "t1" });
      expect(r.rejected).toEqual([{ index: 0, error: `nested deeper than ${MAX_DEPTH} levels` }]);
      expect(r.lines.map((l) => l.index)).toEqual([1]);
    }
  });

  it("cuts multi-MB strings and marks them; keeps a large raw payload as a marked preview", () => {
    const huge = "x".repeat(3 * 1024 * 1024);
    const r = normalizeBatch("canonical", [{ threadId: "t1", type: "retry", error: { httpStatus: 429, message: huge, headers: { "retry-after": huge }, details: Array(10).fill(huge) } }], { receivedAt: NOW });
    expect(r.rejected).toEqual([]);
    const error = r.lines[0].event!.error!;
    expect(error.message!.length).toBeLessThan(MAX_STRING_CHARS + 100);
    expect(error.message).toMatch(/… \[truncated: 3145728 characters\]$/);
    expect(error.details).toMatchObject({ truncated: true, preview: expect.any(String) });
    expect(r.lines[0].raw).toMatchObject({ truncated: true, preview: expect.any(String) });
    expect(JSON.stringify(r.lines[0].raw).length).toBeLessThan(MAX_RAW_CHARS + 1_000);
  });

  it("rejects an over-long id in native lines as in canonical ones", () => {
    const id = "s".repeat(MAX_ID_CHARS + 1);
    const r = normalizeBatch("claude", [{ type: "system", subtype: "init", session_id: id }], { receivedAt: NOW });
    expect(r.rejected[0].error).toMatch(/threadId: expected an id of at most 200 characters/);
  });

  it("replaces lone surrogates in ids (valid JSON, not UTF-8) as the database would, so a permalink can be built", () => {
    const r = normalizeBatch("codex", [{ method: "thread/started", params: { thread: { id: "t\ud800x\udc00" } } }], { receivedAt: NOW });
    expect(r.lines[0].event?.threadId).toBe("t\ufffdx\ufffd");
    expect(() => encodeURIComponent(r.lines[0].event!.threadId)).not.toThrow();
    const named = normalizeBatch("canonical", [{ threadId: "t1", type: "retry", provider: "p\ud800", model: "m\udc00", agent: "a\ud800" }], { receivedAt: NOW });
    expect(named.lines[0].event).toMatchObject({ provider: "p\ufffd", model: "m\ufffd", agent: "a\ufffd" });
    const pair = normalizeBatch("canonical", [{ threadId: "t\ud83d\ude00", type: "progress" }], { receivedAt: NOW });
    expect(pair.lines[0].event?.threadId).toBe("t\ud83d\ude00");
  });

  it("refuses more items than one request may carry, counting before parsing", () => {
    const lines = "{}\n".repeat(MAX_ITEMS + 1);
    expect(() => parseBody(lines, "application/x-ndjson")).toThrow(TooManyItemsError);
    expect(() => parseBody(JSON.stringify(Array(MAX_ITEMS + 1).fill({})))).toThrow(TooManyItemsError);
    expect(parseBody("{}\n".repeat(MAX_ITEMS), "application/x-ndjson").items).toHaveLength(MAX_ITEMS);
  });
});
