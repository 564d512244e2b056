import { describe, expect, it } from "vitest";
import { checkWebhookUrl, hostListing, isPrivateAddress, parseHostPatterns, refusedAddresses } from "./address";

describe("private addresses", () => {
  it.each([
    ["127.0.0.1", true],
    ["127.8.9.10", true],
    ["10.1.2.3", true],
    ["172.16.0.1", true],
    ["172.31.255.255", true],
    ["172.32.0.1", false],
    ["192.168.1.1", true],
    ["169.254.169.254", true],
    ["100.64.0.1", true],
    ["0.0.0.0", true],
    ["224.0.0.1", true],
    ["8.8.8.8", false],
    ["93.184.216.34", false],
    ["::1", true],
    ["::", true],
    ["fe80::1", true],
    ["fd12:3456::1", true],
    ["fc00::1", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:7f00:1", true],
    ["::ffff:10.0.0.1", true],
    ["::ffff:8.8.8.8", false],
    ["64:ff9b::a00:1", true],
    ["64:ff9b::808:808", false],
    ["2606:4700:4700::1111", false],
    ["ff02::1", true],
    ["not an address", true],
  ])("%s → %s", (ip, expected) => expect(isPrivateAddress(ip)).toBe(expected));
});

describe("the allow-list", () => {
  const patterns = parseHostPatterns(" hooks.slack.com, *.example.com ,127.0.0.1,[::1]");

  it.each([
    ["hooks.slack.com", "listed"],
    ["HOOKS.SLACK.COM", "listed"],
    ["a.example.com", "wildcard"],
    ["a.b.example.com", "wildcard"],
    ["example.com", "unlisted"],
    ["evil-example.com", "unlisted"],
    ["127.0.0.1", "listed"],
    ["[::1]", "listed"],
    ["localhost", "unlisted"],
  ])("%s is %s", (host, expected) => expect(hostListing(host, patterns)).toBe(expected));

  it("refuses private addresses unless the host is listed by name", () => {
    expect(refusedAddresses("127.0.0.1", ["127.0.0.1"], patterns)).toEqual([]);
    expect(refusedAddresses("internal.example.com", ["10.0.0.5", "8.8.8.8"], patterns)).toEqual(["10.0.0.5"]);
    expect(refusedAddresses("localhost", ["127.0.0.1", "::1"], [])).toEqual(["127.0.0.1", "::1"]);
    expect(refusedAddresses("public.example.com", ["93.184.216.34"], [])).toEqual([]);
  });

  it.each([
    ["https://hooks.slack.com/services/x", [], true],
    ["ftp://hooks.slack.com/x", [], false],
    ["https://user:pw@hooks.slack.com/x", [], false],
    ["nonsense", [], false],
    ["https://other.org/x", ["hooks.slack.com"], false],
    ["https://a.example.com/x", ["*.example.com"], true],
  ] as const)("%s with %j → %s", (url, list, ok) => expect(checkWebhookUrl(url, list).ok).toBe(ok));
});
