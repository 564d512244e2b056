import { describe, expect, it } from "vitest";
import { acceptsGzip } from "./http";

describe("acceptsGzip", () => {
  it.each([
    [null, false],
    ["", false],
    ["identity", false],
    ["gzip", true],
    ["gzip, deflate, br", true],
    ["br;q=1.0, GZIP;q=0.5", true],
    ["gzip;q=0", false],
    ["gzip;q=0.0, *", false],
    ["*", true],
    ["*;q=0", false],
    ["deflate, x-gzip", true],
  ])("%j → %s", (header, expected) => expect(acceptsGzip(header)).toBe(expected));
});
