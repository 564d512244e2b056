import { describe, expect, it } from "vitest";
import { checkWebhookUrl, embeddedIpv4, hostListing, isPrivateAddress, parseHostPatterns, refusedAddresses } from "./address";

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

// IPv6 forms that carry an IPv4 address: each is refused when the IPv4 it embeds is not public
// (and the local-use NAT64 prefix always: where it leads is the operator's own network).
describe("IPv6 forms that embed an IPv4 address", () => {
  it.each([
    // form, address, the IPv4 it embeds, refused
    ["IPv4-mapped", "::ffff:10.0.0.1", "10.0.0.1", true],
    ["IPv4-mapped", "::ffff:808:808", "8.8.8.8", false],
    ["IPv4-translated", "::ffff:0:7f00:1", "127.0.0.1", true],
    ["IPv4-translated", "::ffff:0:10.1.2.3", "10.1.2.3", true],
    ["IPv4-translated", "::ffff:0:a9fe:a9fe", "169.254.169.254", true],
    ["IPv4-translated", "::ffff:0:808:808", "8.8.8.8", false],
    ["6to4", "2002:a00:1::1", "10.0.0.1", true],
    ["6to4", "2002:c0a8:101::", "192.168.1.1", true],
    ["6to4", "2002:7f00:1:0:0:0:0:1", "127.0.0.1", true],
    ["6to4", "2002:808:808::1", "8.8.8.8", false],
    ["NAT64", "64:ff9b::a9fe:a9fe", "169.254.169.254", true],
    ["NAT64", "64:ff9b::5db8:d822", "93.184.216.34", false],
    ["local NAT64", "64:ff9b:1::a00:1", "10.0.0.1", true],
    ["local NAT64", "64:ff9b:1::c0a8:101", "192.168.1.1", true],
    ["local NAT64", "64:ff9b:1::808:808", "8.8.8.8", true],
    ["Teredo, private client", "2001:0:4136:e378:8000:63bf:f5ff:fffe", "10.0.0.1", true],
    ["Teredo, documentation client", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "192.0.2.45", true],
    ["Teredo, public client", "2001:0:4136:e378:8000:63bf:f7f7:f7f7", "8.8.8.8", false],
  ])("%s %s embeds %s, refused: %s", (_form, ip, ipv4, refused) => {
    expect(embeddedIpv4(ip)).toBe(ipv4);
    expect(isPrivateAddress(ip)).toBe(refused);
  });

  it.each([
    ["2606:4700:4700::1111", false],
    ["2a00:1450:4001:82a::200e", false],
    ["::8.8.8.8", true], // the deprecated IPv4-compatible form
    ["::a00:1", true],
    ["fe80::1%eth0", true],
    ["2001:db8::1", true], // documentation
    ["3fff::1", true], // documentation
    ["2001:2::1", true], // benchmarking
    ["100::1", true], // discard
    ["5f00::1", true], // segment routing
    ["4000::1", true], // outside global unicast
    ["192.0.2.1", true], // documentation
    ["198.51.100.7", true],
    ["203.0.113.9", true],
    ["192.88.99.1", true], // the 6to4 relay anycast
    ["240.0.0.1", true],
    ["255.255.255.255", true],
    ["1.1.1.1", false],
    ["0x7f.1", true], // not a canonical address: never parsed leniently
  ])("%s refused: %s", (ip, refused) => {
    expect(isPrivateAddress(ip)).toBe(refused);
  });

  it("plain addresses embed nothing", () => {
    expect(embeddedIpv4("2606:4700:4700::1111")).toBeNull();
    expect(embeddedIpv4("8.8.8.8")).toBeNull();
  });
});
