import { describe, expect, it } from "vitest";
import { parseBytes, parseDuration, parseRelayArgs, UsageError } from "./args";

const env = { RADAR_URL: "http://127.0.0.1:3000", RADAR_TOKEN: "rr_x" };

describe("relay arguments", () => {
  it("reads server and token from flags or RADAR_URL / RADAR_TOKEN, with clear errors", () => {
    const c = parseRelayArgs(["pipe", "--format", "claude"], env);
    expect(c).toMatchObject({ mode: "pipe", server: "http://127.0.0.1:3000", token: "rr_x", format: "claude" });
    expect(parseRelayArgs(["claude", "--server", "http://h:1/", "--token", "t"], {})).toMatchObject({ server: "http://h:1", token: "t" });
    expect(() => parseRelayArgs(["claude"], { RADAR_TOKEN: "t" })).toThrow(/RADAR_URL/);
    expect(() => parseRelayArgs(["claude"], { RADAR_URL: "http://x" })).toThrow(/RADAR_TOKEN/);
    expect(() => parseRelayArgs(["claude", "--server", "ftp://x"], env)).toThrow(UsageError);
  });

  it("validates the mode and mode-specific options", () => {
    expect(() => parseRelayArgs([], env)).toThrow(/missing mode/);
    expect(() => parseRelayArgs(["gemini"], env)).toThrow(/unknown mode/);
    expect(() => parseRelayArgs(["pipe"], env)).toThrow(/--format/);
    expect(() => parseRelayArgs(["claude", "--prompt", "x"], env)).toThrow(/--prompt/);
    expect(() => parseRelayArgs(["claude", "--bogus"], env)).toThrow(UsageError);
    expect(parseRelayArgs(["--help"], env)).toBe("help");
  });

  it("passes everything after -- to the agent", () => {
    const c = parseRelayArgs(["claude", "--kill-grace", "2s", "--", "--model", "x", "say hi"], env);
    expect(c).toMatchObject({ mode: "claude", format: "claude", killGraceMs: 2000, agentArgs: ["--model", "x", "say hi"] });
    const a = parseRelayArgs(["codex-app-server", "--prompt", "fix it", "--cwd", "/tmp", "--stay"], env);
    expect(a).toMatchObject({ format: "codex", prompt: "fix it", cwd: "/tmp", stay: true, approvalPolicy: "never" });
  });

  it("parses durations and sizes", () => {
    expect(parseDuration("250ms", "x")).toBe(250);
    expect(parseDuration("1.5s", "x")).toBe(1500);
    expect(parseDuration("2m", "x")).toBe(120_000);
    expect(parseDuration("40", "x")).toBe(40);
    expect(() => parseDuration("soon", "x")).toThrow(UsageError);
    expect(parseBytes("8mb", "x")).toBe(8 * 1024 * 1024);
    expect(parseBytes("512kb", "x")).toBe(512 * 1024);
  });
});
