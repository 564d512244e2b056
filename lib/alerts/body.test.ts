import { describe, expect, it } from "vitest";
import { alertBody, slackEscape } from "./body";
import { currentConditions, threadAlerts, type BlindSettings } from "./rules";

const now = Date.parse("2026-12-04T12:00:00Z");
const settings: BlindSettings = { silenceFloorMs: 60_000, silenceFactor: 3, pollGapMs: 120_000, stopGraceMs: 60_000, backlogMs: 300_000 };
const slackText = (alert: Parameters<typeof alertBody>[1]) => JSON.parse(alertBody("slack", alert, 7, "https://radar.example.com")).text as string;

// Slack reads `<…>` as a mention, a channel-wide notification or a link with any label: a value a
// source chose (thread id, title, source name) must reach the channel as the characters it sent.
describe("Slack text from untrusted values", () => {
  it.each([
    ["<!channel>", "&lt;!channel&gt;"],
    ["<http://evil.example|click>", "&lt;http://evil.example|click&gt;"],
    ["a & b", "a &amp; b"],
    ["&lt;", "&amp;lt;"],
    ["plain · text — 5 %", "plain · text — 5 %"],
  ])("%s is sent as %s", (value, escaped) => expect(slackEscape(value)).toBe(escaped));

  it("a thread's id and title cannot notify the channel or disguise a link", () => {
    const [alert] = threadAlerts([{ key: 1, externalId: "<!channel>", title: "<http://evil.example|Open the report> & <@U123>", statusBefore: "running", status: "broken", lastSeq: 9 }], now);
    const text = slackText(alert);
    expect(text).toContain("&lt;!channel&gt; (&lt;http://evil.example|Open the report&gt; &amp; &lt;@U123&gt;)");
    // The only markup left is the radar's own link, its path percent-encoded.
    expect(text.match(/</g)).toHaveLength(1);
    expect(text).toMatch(/ <https:\/\/radar\.example\.com\/threads\/%3C!channel%3E\|open>$/);
    // The generic JSON body carries the values as they are: its receiver formats them.
    expect(JSON.parse(alertBody("json", alert, 7, "https://radar.example.com")).text).toContain("<!channel> (<http://evil.example|Open the report> & <@U123>)");
  });

  it("a source's name in a condition is escaped too", () => {
    const conditions = currentConditions({ sources: [{ id: "s1", name: "<!here>", lastSeenAt: now - 600_000, usualGapMs: null, lastPolledAt: null }], stops: [{ id: "d1", thread: "<!everyone>", source: "<#C1>", createdAt: now - 120_000 }], oldestPendingAt: null, limits: [] }, settings, [], now);
    const texts = conditions.map((c) => slackText({ event: c.event, state: "raised", subject: c.subject, text: c.text, at: new Date(now).toISOString(), path: null }));
    expect(texts).toEqual([expect.stringContaining("Source &lt;!here&gt; silent"), expect.stringContaining("stop of &lt;!everyone&gt; (&lt;#C1&gt;)")]);
    for (const text of texts) expect(text).not.toContain("<");
  });
});
