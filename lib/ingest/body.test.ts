import { describe, expect, it } from "vitest";
import { normalizeBatch } from "./batch";
import { BodyParseError, parseBody } from "./body";
import { InvalidLine } from "./native";

describe("parseBody", () => {
  it.each([
    ["one object", '{"a":1}', null, [{ a: 1 }], "json"],
    ["an array", '[{"a":1},{"b":2}]', "application/json", [{ a: 1 }, { b: 2 }], "array"],
    ["pretty-printed object", '{\n  "a": 1\n}\n', null, [{ a: 1 }], "json"],
    ["NDJSON by content type", '{"a":1}\n{"b":2}\n', "application/x-ndjson; charset=utf-8", [{ a: 1 }, { b: 2 }], "ndjson"],
    ["NDJSON by shape", '{"a":1}\n\n{"b":2}', "application/json", [{ a: 1 }, { b: 2 }], "ndjson"],
    ["NDJSON with CRLF and blank lines", '{"a":1}\r\n\r\n   \r\n{"b":2}\r\n', null, [{ a: 1 }, { b: 2 }], "ndjson"],
    ["one NDJSON line", '{"a":1}\n', "application/x-ndjson", [{ a: 1 }], "ndjson"],
    ["a BOM", '\uFEFF{"a":1}', null, [{ a: 1 }], "json"],
  ])("%s", (_n, text, type, items, kind) => {
    const r = parseBody(text, type);
    expect(r.items).toEqual(items);
    expect(r.rejected).toEqual([]);
    expect(r.kind).toBe(kind);
  });

  it("an NDJSON bad line is rejected by index with its line number; the others are kept", () => {
    const r = parseBody('{"a":1}\n\n{"b":\n{"c":3}\n', "application/x-ndjson");
    expect(r.items).toHaveLength(3);
    expect(r.items[0]).toEqual({ a: 1 });
    expect(r.items[1]).toBeInstanceOf(InvalidLine);
    expect(r.items[2]).toEqual({ c: 3 });
    expect(r.rejected).toHaveLength(1);
    expect(r.rejected[0].index).toBe(1);
    expect(r.rejected[0].error).toMatch(/^line 3: invalid JSON: /);
  });

  it("normalizeBatch skips the placeholder, keeping indices aligned (no double report)", () => {
    const text = '{"threadId":"t","type":"retry"}\nnot json\n{"threadId":"t","type":"progress"}';
    const body = parseBody(text, "application/x-ndjson");
    const batch = normalizeBatch("canonical", body.items, { receivedAt: Date.UTC(2026, 0, 1) });
    expect(batch.lines.map((l) => l.index)).toEqual([0, 2]);
    expect(batch.rejected).toEqual([]);
    expect(body.rejected.map((r) => r.index)).toEqual([1]);
  });

  it.each([
    ["empty", "", /^empty body/],
    ["blank", "  \n\n ", /^empty body/],
    ["truncated object", '{"a":', /^invalid JSON at line 1 column \d+: /],
    ["garbage", "hello", /^invalid JSON/],
    ["broken pretty JSON", '{\n  "a": 1,\n  "b": oops\n}', /^invalid JSON at line 3 column \d+/],
    ["NDJSON with no valid line", "nope\nnope either\n", /^unparseable body: no line is valid JSON \(line 1: invalid JSON/],
  ])("throws BodyParseError for %s", (_n, text, message) => {
    let caught: unknown;
    try {
      parseBody(text, text.includes("nope") ? "application/x-ndjson" : null);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(BodyParseError);
    expect((caught as Error).message).toMatch(message);
  });

  it("reports line and column on the error", () => {
    try {
      parseBody('{\n  "a": 1,\n  "b": oops\n}');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(BodyParseError);
      expect((e as BodyParseError).line).toBe(3);
      expect((e as BodyParseError).column).toBeGreaterThan(1);
    }
  });

  it("a JSON scalar is one item, rejected later by the adapter", () => {
    const body = parseBody("42");
    expect(body.items).toEqual([42]);
    const r = normalizeBatch("claude", body.items, { receivedAt: Date.UTC(2026, 0, 1) });
    expect(r.rejected).toEqual([{ index: 0, error: "expected a JSON object" }]);
  });
});

describe("locateJsonError", async () => {
  const { locateJsonError } = await import("./json-locate");
  it.each([
    ['{"a":1}', null],
    ["[1, 2, {\"x\": [true, false, null, -1.5e3, \"\\u00e9\\n\"]}]", null],
    ['{"a":', 5],
    ['{"a" 1}', 5],
    ["[1,]", 3],
    ['{"a":1} x', 8],
    ["tru", 3],
    ['"abc', 4],
    ["01", 1],
  ])("%s → %s", (text, offset) => {
    expect(locateJsonError(text)).toBe(offset);
    expect(offset === null).toBe((() => { try { JSON.parse(text); return true; } catch { return false; } })());
  });
});
