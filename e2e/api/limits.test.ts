import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LimitsView, LimitWindowView } from "@/lib/wire/types";
import { get, post, startServer, type RunningServer } from "../support/server";

/**
 * GET /api/v1/limits against the built app: usage windows reported by Claude Code
 * (`rate_limit_event`, as in the real OAuth captures), Codex app-server and canonical
 * `limit.updated` events come back as one row per (source, account, provider, window).
 */
let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

const NOW = Date.now();
const RESET_S = Math.floor(NOW / 1000) + 2 * 3600 + 180;
const wrap = (at: number, message: object) => ({ at, message });

async function limits(): Promise<LimitWindowView[]> {
  const response = await get(server, "/api/v1/limits");
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return (response.body as LimitsView).windows;
}

describe("GET /api/v1/limits", () => {
  it("is a viewer's read: no credential, no limits", async () => {
    expect((await get(server, "/api/v1/limits", null)).status).toBe(401);
  });

  it("a Claude warning: the five-hour window at 92 %, its reset as ISO-8601", async () => {
    const session = "claude-warn";
    const response = await post(server, "/api/v1/ingest/claude", [
      wrap(NOW - 2000, { type: "system", subtype: "init", session_id: session, model: "claude-sonnet-5", uuid: "init-1" }),
      wrap(NOW - 1000, { type: "rate_limit_event", session_id: session, rate_limit_info: { status: "allowed_warning", resetsAt: RESET_S, rateLimitType: "five_hour", utilization: 0.92, isUsingOverage: false } }),
      wrap(NOW - 900, { type: "result", subtype: "success", is_error: false, session_id: session, result: "Hi" }),
    ]);
    expect(response.body).toMatchObject({ accepted: 3, rejected: [] });
    const [row] = (await limits()).filter((w) => w.provider === "anthropic");
    expect(row).toMatchObject({
      provider: "anthropic",
      window: "five_hour",
      windowMinutes: 300,
      usedPercent: 92,
      status: "warning",
      resetAt: new Date(RESET_S * 1000).toISOString(),
      observedAt: new Date(NOW - 1000).toISOString(),
      stale: false,
      threadId: session,
      blockedThreads: [],
    });
  });

  it("a Claude refusal on the same account: the row turns rejected and names the failed thread", async () => {
    const session = "claude-refused";
    await post(server, "/api/v1/ingest/claude", [
      wrap(NOW - 800, { type: "system", subtype: "init", session_id: session, uuid: "init-2" }),
      wrap(NOW - 700, { type: "rate_limit_event", session_id: session, rate_limit_info: { status: "rejected", resetsAt: RESET_S, rateLimitType: "five_hour", isUsingOverage: false } }),
      wrap(NOW - 690, {
        type: "assistant",
        session_id: session,
        error: "rate_limit",
        message: { model: "<synthetic>", role: "assistant", content: [{ type: "text", text: "You've hit your session limit · resets 12:28pm (UTC)" }] },
      }),
      wrap(NOW - 680, { type: "result", subtype: "success", is_error: true, api_error_status: 429, session_id: session, result: "You've hit your session limit · resets 12:28pm (UTC)" }),
    ]);
    const rows = (await limits()).filter((w) => w.provider === "anthropic");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ usedPercent: 100, status: "rejected", threadId: session });
    // The refusal is a usage limit with its reset read from the text: the ended turn waits for it.
    expect(rows[0].blockedThreads).toEqual([expect.objectContaining({ id: session, status: "waiting_reset" })]);
    expect(rows[0].history.map((h) => h.usedPercent)).toEqual([92, 100]);
  });

  it("Codex app-server's account-wide windows, with no thread at all", async () => {
    const response = await post(server, "/api/v1/ingest/codex", [
      wrap(NOW - 500, {
        method: "account/rateLimits/updated",
        params: {
          rateLimits: {
            limitId: "codex",
            primary: { usedPercent: 100, windowDurationMins: 300, resetsAt: RESET_S },
            secondary: { usedPercent: 12, windowDurationMins: 10_080, resetsAt: RESET_S + 5 * 86_400 },
            rateLimitReachedType: "rate_limit_reached",
          },
        },
      }),
    ]);
    expect(response.body).toMatchObject({ accepted: 1, rejected: [] });
    const rows = (await limits()).filter((w) => w.provider === "openai");
    expect(rows.map((w) => [w.window, w.usedPercent, w.windowMinutes, w.status, w.reachedType, w.threadId])).toEqual([
      ["primary", 100, 300, "rejected", "rate_limit_reached", null],
      ["secondary", 12, 10_080, "ok", null, null],
    ]);
  });

  it("canonical limit.updated: one row per account; a bad one is refused by its field", async () => {
    const response = await post(server, "/api/v1/events", [
      { type: "limit.updated", provider: "openrouter", account: "key-a", window: "daily", usedPercent: 40.5, resetsAt: new Date(RESET_S * 1000).toISOString(), at: NOW - 400 },
      { type: "limit.updated", provider: "openrouter", account: "key-b", window: "daily", usedPercent: 95, at: NOW - 400 },
      { type: "limit.updated", provider: "openrouter", window: "daily", usedPercent: 140 },
    ]);
    expect(response.body.accepted).toBe(2);
    expect(response.body.rejected).toEqual([{ index: 2, error: expect.stringContaining("usedPercent: expected a number between 0 and 100") }]);
    const rows = (await limits()).filter((w) => w.provider === "openrouter");
    expect(rows.map((w) => [w.account, w.usedPercent, w.status])).toEqual([
      ["key-a", 40.5, "ok"],
      ["key-b", 95, "warning"],
    ]);
  });
});
