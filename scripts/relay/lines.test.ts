import { describe, expect, it } from "vitest";
import { followThread, isWrapped, LineSplitter, parseObjectLine, threadOfLine, unwrapValue, wrapLine } from "./lines";

describe("relay lines", () => {
  it("splits chunks into lines across boundaries, CRLF and split UTF-8", () => {
    const s = new LineSplitter();
    const euro = Buffer.from("€", "utf8");
    expect(s.push('{"a":1}\n{"b"')).toEqual(['{"a":1}']);
    expect(s.push(Buffer.concat([Buffer.from(':"'), euro.subarray(0, 1)]))).toEqual([]);
    expect(s.push(Buffer.concat([euro.subarray(1), Buffer.from('"}\r\n\n{"c":3}')]))).toEqual(['{"b":"€"}', ""]);
    expect(s.end()).toEqual(['{"c":3}']);
  });

  it("accepts JSON objects only", () => {
    expect(parseObjectLine('  {"x":1} ')).toMatchObject({ ok: true, text: '{"x":1}' });
    expect(parseObjectLine("Reading prompt from stdin...")).toMatchObject({ ok: false, reason: "not a JSON object" });
    expect(parseObjectLine("[1]")).toMatchObject({ ok: false });
    expect(parseObjectLine('{"x":')).toMatchObject({ ok: false });
    expect(parseObjectLine("")).toMatchObject({ ok: false, reason: "blank" });
  });

  it("wraps the line's own bytes with the receive time", () => {
    const text = '{"method":"error","params":{"b":2,"a":1}}';
    const wrapped = wrapLine(text, 1795971676524);
    expect(wrapped).toBe(`{"at":1795971676524,"message":${text}}`);
    const value = JSON.parse(wrapped);
    expect(isWrapped(value)).toBe(true);
    expect(unwrapValue(value)).toEqual(JSON.parse(text));
    // A Claude line has its own `message` field among others: not a wrapper.
    expect(isWrapped({ type: "assistant", message: { role: "assistant" }, session_id: "s" })).toBe(false);
  });

  it("knows which thread a line names", () => {
    expect(threadOfLine("codex-exec", { type: "thread.started", thread_id: "t-exec" })).toBe("t-exec");
    expect(threadOfLine("codex-exec", { type: "turn.started" })).toBeNull();
    expect(threadOfLine("claude", { type: "system", subtype: "api_retry", session_id: "s1" })).toBe("s1");
    expect(threadOfLine("codex", { method: "thread/started", params: { thread: { id: "th" } } })).toBe("th");
    expect(threadOfLine("codex", { method: "error", params: { threadId: "th2", willRetry: true } })).toBe("th2");
    expect(threadOfLine("codex", { method: "account/rateLimits/updated", params: {} })).toBeNull();
    const lines = [wrapLine('{"type":"thread.started","thread_id":"a"}', 1), wrapLine('{"type":"turn.started"}', 2)];
    expect(followThread("codex-exec", lines, null)).toBe("a");
    expect(followThread("codex-exec", [wrapLine('{"type":"turn.completed"}', 3)], "a")).toBe("a");
  });
});
