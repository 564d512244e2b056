import { describe, expect, it } from "vitest";
import { insightsQueryString, parseExportQuery, parseInsightsQuery } from "./range";

const now = Date.UTC(2026, 10, 29, 14, 0, 0);
const H = 3_600_000;

describe("insights range", () => {
  it.each([
    ["default: last 24 h, hourly", "", { preset: "24h", from: now - 24 * H, to: now, bucket: "hour" }],
    ["last hour, per minute", "range=1h", { preset: "1h", from: now - H, to: now, bucket: "minute" }],
    ["last 7 days, hourly", "range=7d", { preset: "7d", from: now - 7 * 24 * H, to: now, bucket: "hour" }],
    [
      "absolute from/to win over a preset",
      "range=7d&from=2026-11-01T10:00:00.000Z&to=2026-11-01T11:00:00.000Z",
      { preset: "custom", from: Date.UTC(2026, 10, 1, 10), to: Date.UTC(2026, 10, 1, 11), bucket: "minute" },
    ],
    ["epoch milliseconds", `from=${now - 2 * H}&to=${now}`, { preset: "custom", from: now - 2 * H, to: now, bucket: "minute" }],
    ["from alone runs to now", "from=2026-11-01T00:00:00Z", { preset: "custom", from: Date.UTC(2026, 10, 1), to: now, bucket: "day" }],
  ])("%s", (_name, search, range) => {
    const parsed = parseInsightsQuery(new URLSearchParams(search), now);
    expect(parsed.ok && parsed.query.range).toMatchObject(range);
  });

  it.each([
    ["unknown preset", "range=2w", "range: expected 1h, 24h or 7d"],
    ["unknown split", "split=agent", "split: expected kind, provider or model"],
    ["from after to", "from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z", "from: must be before to"],
    ["too wide", "from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z", "from: the range may span at most 366 days"],
    ["bad time", "from=yesterday", "from: expected an ISO-8601 time or epoch milliseconds"],
    ["bad kind (board filter parser)", "kind=teapot", "kind"],
  ])("%s is refused", (_name, search, error) => {
    const parsed = parseInsightsQuery(new URLSearchParams(search), now);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toContain(error);
  });

  it("keeps the board filter, without page or time", () => {
    const parsed = parseInsightsQuery(new URLSearchParams("provider=openai,anthropic&kind=capacity&q=x&page=2&split=model"), now);
    expect(parsed.ok && parsed.query).toMatchObject({
      filter: { provider: ["openai", "anthropic"], kind: ["capacity"], q: "x" },
      split: "model",
    });
    expect(parsed.ok && "page" in parsed.query.filter).toBe(false);
  });
});

describe("insights URLs", () => {
  it.each([
    ["default view has no parameters", "", {}, ""],
    ["preset and split", "range=1h&split=provider&provider=openai", {}, "?provider=openai&range=1h&split=provider"],
    ["permalink pins the instants", "range=1h", { absolute: true }, `?from=${encodeURIComponent(new Date(now - H).toISOString())}&to=${encodeURIComponent(new Date(now).toISOString())}`],
  ])("%s", (_name, search, options, expected) => {
    const parsed = parseInsightsQuery(new URLSearchParams(search), now);
    expect(parsed.ok && insightsQueryString(parsed.query, options)).toBe(expected);
  });

  it("a permalink parses back to the same range whatever the time", () => {
    const first = parseInsightsQuery(new URLSearchParams("range=24h&kind=capacity"), now);
    if (!first.ok) throw new Error(first.error);
    const again = parseInsightsQuery(new URLSearchParams(insightsQueryString(first.query, { absolute: true })), now + 5 * H);
    expect(again.ok && again.query.range).toMatchObject({ from: now - 24 * H, to: now, preset: "custom" });
    expect(again.ok && again.query.filter).toEqual(first.query.filter);
  });
});

describe("export range", () => {
  it.each([
    ["no range exports everything", "", null],
    ["a preset", "range=1h", { from: now - H, to: now }],
    ["absolute", "from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z", { from: Date.UTC(2026, 10, 1), to: Date.UTC(2026, 10, 2) }],
  ])("%s", (_name, search, range) => {
    const parsed = parseExportQuery(new URLSearchParams(search), now);
    expect(parsed.ok && parsed.query.range).toEqual(range);
  });
});
