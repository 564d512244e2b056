import { describe, expect, it } from "vitest";
import { CaptureParseError, parseCapture } from "./capture";
import { captureNames, loadCapture, readCapture } from "./test-fixtures";

const EXPECTED_FORMAT: Record<string, string> = {
  "claude-a429-then-ok": "claude",
  "claude-a529-overloaded": "claude",
  "codex-appserver-429-then-ok": "codex",
  "codex-appserver-503-capacity": "codex",
  "codex-exec-429-always": "codex-exec",
  "codex-exec-429-then-ok": "codex-exec",
};

describe("parseCapture", () => {
  it.each(captureNames())("%s: format detected, only recv/stdout lines, wrapped with ts_ms", (name) => {
    const text = readCapture(name);
    const cap = loadCapture(name);
    expect(cap.format).toBe(EXPECTED_FORMAT[name]);
    const recs = text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
    const wanted = recs.filter((r) => (r.dir === "recv" && r.msg) || (r.src === "stdout" && r.json));
    expect(cap.items).toEqual(wanted.map((r) => ({ at: r.ts_ms, message: r.msg ?? r.json })));
    expect(cap.lineCount).toBe(recs.length);
    expect(cap.skipped).toBe(recs.length - wanted.length);
  });

  it("detects exec and Claude from the runner argv when stdout says nothing recognisable", () => {
    const exec = parseCapture(
      '{"ts":"x","ts_ms":1,"src":"runner","event":"start","argv":["/bin/codex","exec","--json"]}\n{"ts":"x","ts_ms":2,"src":"stdout","json":{"type":"novel"}}',
    );
    expect(exec.format).toBe("codex-exec");
    const claude = parseCapture('{"ts_ms":1,"src":"runner","argv":["/x/claude","-p","--output-format","stream-json"]}');
    expect(claude.format).toBe("claude");
    expect(claude.items).toEqual([]);
  });

  it("falls back to the ISO ts when ts_ms is missing", () => {
    const cap = parseCapture('{"ts":"2026-11-29T17:00:00Z","src":"stdout","json":{"type":"turn.started"}}');
    expect(cap.items).toEqual([{ at: "2026-11-29T17:00:00Z", message: { type: "turn.started" } }]);
  });

  it.each([
    ["empty", "", /empty capture/],
    ["bad JSON", '{"dir":"recv"}\n{oops', /^line 2: invalid JSON/],
    ["not capture lines", '{"type":"turn.started"}', /^line 1: not a capture line/],
    ["undetectable", '{"src":"stderr","text":"hi"}', /cannot tell the capture's format/],
  ])("rejects %s", (_n, text, message) => {
    expect(() => parseCapture(text)).toThrow(CaptureParseError);
    expect(() => parseCapture(text)).toThrow(message);
  });

  it("checks an expected format", () => {
    expect(() => parseCapture(readCapture("codex-exec-429-always"), "claude")).toThrow(/looks like codex-exec, not claude/);
  });
});
