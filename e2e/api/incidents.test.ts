import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IncidentDetail, IncidentList } from "@/lib/wire/types";
import { builtAction, callAction } from "../support/actions";
import { get, post, queryDatabase, startServer, type RunningServer } from "../support/server";

/**
 * Incidents against the built app: a burst of retry notices from three threads on one model,
 * posted through the API, opens one incident; GET shows it; a later notice dated after the quiet
 * period closes it. A source set to two threads opens one with two. Time is driven by the events'
 * own timestamps, never by sleeping.
 */
let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

const QUIET_MS = 5 * 60_000;
// Far enough back that the watchdog cannot close it for quiet before the test reads it open.
const BURST_AT = Date.now() - 3 * 60_000;
const retry = (threadId: string, at: number, model: string) => ({
  threadId, type: "retry", at, turnId: "u1", attempt: 1, maxAttempts: 5, provider: "openai", model,
  error: { httpStatus: 429, message: "Rate limit reached." },
});

async function incidents(state: string, model = "e2e-wall"): Promise<IncidentList["incidents"]> {
  const response = await get(server, `/api/v1/incidents?state=${state}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return (response.body as IncidentList).incidents.filter((i) => i.model === model);
}

/** Saves the source's settings as the Sources page's form does (blank thresholds: the global ones). */
async function updateSource(form: Record<string, string>) {
  const [{ id: sourceId }] = await queryDatabase<{ id: string }>(server, `SELECT id FROM "Source" ORDER BY "createdAt" LIMIT 1`);
  const { result } = await callAction(server.url, builtAction("lib/actions/update-source.ts#updateSource"), { form: { sourceId, policy: "", ...form } }, { authorization: `Bearer ${server.apiKey}` });
  return result as { ok: boolean; error?: string };
}

describe("incidents", () => {
  it("are a viewer's read", async () => {
    expect((await get(server, "/api/v1/incidents", null)).status).toBe(401);
    expect((await get(server, "/api/v1/incidents?state=sideways")).status).toBe(400);
    expect((await get(server, "/api/v1/incidents/inc-nope")).status).toBe(404);
  });

  it("a burst through the API opens one incident, GET shows it, and it closes after the quiet period", async () => {
    const burst = ["wall-1", "wall-2", "wall-3"].map((id, i) => retry(id, BURST_AT + i * 1000, "e2e-wall"));
    expect((await post(server, "/api/v1/events", burst)).body).toMatchObject({ accepted: 3 });

    const [open] = await incidents("open");
    expect(open).toMatchObject({ state: "open", kind: "rate_limit", scope: "openai · e2e-wall", threadCount: 3, notices: 3, startedAt: new Date(BURST_AT).toISOString(), endedAt: null });
    const detail = (await get(server, `/api/v1/incidents/${open.id}`)).body as IncidentDetail;
    expect(detail.threads.map((t) => t.id).sort()).toEqual(["wall-1", "wall-2", "wall-3"]);
    expect(detail.timeline.reduce((sum, r) => sum + r.notices, 0)).toBe(3);
    const metrics = await (await server.fetch(`${server.url}/api/metrics`)).text();
    expect(metrics).toContain('radar_incidents_open{kind="rate_limit",provider="openai",model="e2e-wall"} 1');

    // A notice elsewhere, dated when the quiet period has passed, closes it.
    const lastNoticeAt = BURST_AT + 2000;
    expect((await post(server, "/api/v1/events", [retry("elsewhere", lastNoticeAt + QUIET_MS, "e2e-other")])).body).toMatchObject({ accepted: 1 });
    expect(await incidents("open")).toEqual([]);
    const [closed] = await incidents("closed");
    expect(closed).toMatchObject({ id: open.id, state: "closed", closedBy: "quiet", endedAt: new Date(lastNoticeAt).toISOString() });
  });

  it("a source set to two threads opens an incident with two", async () => {
    expect(await updateSource({ incidentMinThreads: "1" })).toMatchObject({ ok: false, error: expect.stringContaining("at least 2") });
    expect(await updateSource({ incidentMinThreads: "2", incidentWindowSeconds: "5" })).toMatchObject({ ok: false, error: expect.stringContaining("10 s to 1 h") });
    expect(await updateSource({ incidentMinThreads: "2", incidentWindowSeconds: "120" })).toMatchObject({ ok: true });
    const [audited] = await queryDatabase<{ detail: string }>(server, `SELECT detail FROM "AuditEntry" WHERE action = 'update-source' ORDER BY id DESC LIMIT 1`);
    expect(audited.detail).toContain("incidents default threads in default → 2 threads in 120 s");

    const pair = ["two-1", "two-2"].map((id, i) => retry(id, BURST_AT + i * 1000, "e2e-two"));
    expect((await post(server, "/api/v1/events", pair)).body).toMatchObject({ accepted: 2 });
    const [open] = await incidents("open", "e2e-two");
    expect(open).toMatchObject({ state: "open", scope: "openai · e2e-two", threadCount: 2, startedAt: new Date(BURST_AT).toISOString() });

    // Blank again: the global settings.
    expect(await updateSource({ incidentMinThreads: "", incidentWindowSeconds: "" })).toMatchObject({ ok: true });
  });
});
