import { describe, expect, it } from "vitest";
import { localPath } from "./validation";

/**
 * Where sign-in may send someone afterwards: only a path on this server, whatever a browser (which
 * drops tabs and newlines from a URL and reads `\` as `/`) or a component that decodes it once
 * more would make of it.
 */
describe("localPath: the target after sign-in", () => {
  it.each([
    ["/", "/"],
    ["/threads", "/threads"],
    ["/threads/t-1?source=codex#latest", "/threads/t-1?source=codex#latest"],
    ["/threads/t%2F1", "/threads/t%2F1"],
    ["/threads/caf%C3%A9", "/threads/caf%C3%A9"],
    ["/threads/café", "/threads/caf%C3%A9"],
    ["/insights?from=2026-01-01&to=2026-02-01", "/insights?from=2026-01-01&to=2026-02-01"],
    ["/a b", "/a%20b"],
    ["/x/../y", "/y"],
    ["/search?q=a/b//c", "/search?q=a/b//c"],
    ["/;//evil.example", "/;//evil.example"],
  ])("keeps %j as %j", (target, expected) => {
    expect(localPath.parse(target)).toBe(expected);
  });

  const hostile: ReadonlyArray<readonly [why: string, target: string]> = [
    ["scheme-relative", "//evil.example"],
    ["scheme-relative with a path", "//evil.example/threads"],
    ["absolute http", "http://evil.example/"],
    ["absolute https", "https://evil.example"],
    ["absolute, naming a loopback origin", "http://127.0.0.1:4321/"],
    ["javascript:", "javascript:alert(1)"],
    ["data:", "data:text/html,<script>alert(1)</script>"],
    ["relative, no leading slash", "evil.example"],
    ["empty", ""],
    ["encoded tab", "/%09/evil.example"],
    ["encoded newline", "/%0a/evil.example"],
    ["encoded carriage return", "/%0D/evil.example"],
    ["encoded NUL", "/%00/evil.example"],
    ["encoded DEL", "/%7f/evil.example"],
    ["encoded unit separator", "/%1F/evil.example"],
    ["raw tab", "/\t/evil.example"],
    ["raw newline", "/\n/evil.example"],
    ["raw CRLF", "/\r\n/evil.example"],
    ["raw NUL", "/\u0000/evil.example"],
    ["raw DEL", "/\u007f/evil.example"],
    ["leading tab", "\t//evil.example"],
    ["raw backslash", "/\\evil.example"],
    ["two raw backslashes", "/\\\\evil.example"],
    ["slash, backslash", "/\\/evil.example"],
    ["encoded backslash", "/%5Cevil.example"],
    ["encoded backslash, lower case", "/%5cevil.example"],
    ["encoded slashes (decoded once: //evil.example)", "/%2F%2Fevil.example"],
    ["one encoded slash", "/%2fevil.example"],
    ["doubly encoded tab", "/%2509/evil.example"],
    ["doubly encoded backslash", "/%255Cevil.example"],
    ["dot segment before //", "/..//evil.example"],
    ["dot before //", "/.//evil.example"],
    ["encoded dot segment before //", "/%2e%2e//evil.example"],
    ["dot segments climbing to //", "/a/../..//evil.example"],
    ["undecodable escape", "/%E0%A4%A/evil"],
    ["too long", `/${"a".repeat(2_000)}`],
  ];
  it.each(hostile)("refuses %s: sends to / instead", (_why, target) => {
    expect(localPath.parse(target)).toBe("/");
  });

  it("refuses anything but a string", () => {
    expect(localPath.parse(undefined)).toBe("/");
    expect(localPath.parse(["/threads"])).toBe("/");
  });

  it("never hands back a target a browser would read as another origin", () => {
    // What a browser does with a Location header: strips tabs and newlines, then resolves it.
    const browserRead = (location: string) => new URL(location.replace(/[\t\n\r]/g, ""), "https://radar.example.com");
    for (const [, target] of hostile) {
      const path = localPath.parse(target);
      expect(browserRead(path).origin).toBe("https://radar.example.com");
      expect(browserRead(decodeURIComponent(path)).origin).toBe("https://radar.example.com");
    }
  });
});
