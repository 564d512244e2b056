import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXPORT_COLUMNS, TIMELINE_COLUMNS } from "@/lib/db/exports";
import { INCIDENT_SPAN_MS, incidentEvents } from "@/lib/insights/incident-fixture";
import { get, post, startServer, storeOfServer, type RunningServer } from "../support/server";

/**
 * Exports against the built app: the known incident in, then threads, episodes and attempts out
 * as JSON, NDJSON and CSV, with the documented columns, the filter and range applied, and
 * spreadsheet formulas in the data neutralised in CSV.
 */
const MINUTE = 60_000;
const T0 = Math.floor((Date.now() - 2 * 86_400_000) / MINUTE) * MINUTE;
const iso = (ms: number) => new Date(ms).toISOString();
const RANGE = `from=${iso(T0)}&to=${iso(T0 + INCIDENT_SPAN_MS)}`;

let server: RunningServer;

beforeAll(async () => {
  server = await startServer();
  const events = incidentEvents(T0);
  const response = await post(server, "/api/v1/events", events);
  expect(response.body.accepted).toBe(events.length);
});
afterAll(async () => {
  await server?.stop();
});

/** RFC 4180: quoted fields, doubled quotes, CRLF records, newlines inside quotes. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") row.push(cell), (cell = "");
    else if (c === "\r" && text[i + 1] === "\n") row.push(cell), rows.push(row), (row = []), (cell = ""), i++;
    else cell += c;
  }
  expect(cell === "" && row.length === 0, "the CSV ends with CRLF").toBe(true);
  return rows;
}

async function download(path: string) {
  const response = await server.fetch(`${server.url}${path}`);
  return { response, text: await response.text() };
}

describe("exports of the board filter and range", () => {
  it.each([
    ["threads", "", ["inc-a", "inc-b", "inc-c"]],
    ["threads", "provider=openai", ["inc-a", "inc-b"]],
    ["threads", RANGE, ["inc-a", "inc-b", "inc-c"]],
    ["threads", `from=${iso(T0 + 3 * MINUTE)}&to=${iso(T0 + 4 * MINUTE)}`, ["inc-c"]],
    ["episodes", RANGE, ["inc-a#1", "inc-b#1", "inc-c#1", "inc-c#2"]],
    ["episodes", `${RANGE}&kind=transport`, ["inc-c#2"]],
    ["attempts", RANGE, ["inc-a#1.1", "inc-b#1.1", "inc-a#1.2", "inc-b#1.2", "inc-c#1.1", "inc-c#2.1", "inc-c#2.6"]],
    ["attempts", `${RANGE}&provider=anthropic`, ["inc-c#1.1", "inc-c#2.1", "inc-c#2.6"]],
    ["attempts", `from=${iso(T0 + 3 * MINUTE)}&to=${iso(T0 + 4 * MINUTE)}`, ["inc-c#1.1", "inc-c#2.1", "inc-c#2.6"]],
    ["attempts", `from=${iso(T0 - 2 * MINUTE)}&to=${iso(T0)}`, []],
  ] as const)("%s ?%s as JSON", async (kind, query, ids) => {
    const { response, text } = await download(`/api/v1/exports/${kind}?${query}&format=json`);
    expect(response.status, text).toBe(200);
    const rows = JSON.parse(text) as Record<string, unknown>[];
    expect(rows.map((r) => `${r.threadId}${r.episodeSeq ? `#${r.episodeSeq}` : ""}${r.n ? `.${r.n}` : ""}`)).toEqual(ids);
    for (const row of rows) expect(Object.keys(row)).toEqual([...EXPORT_COLUMNS[kind]]);
  });

  it.each(["threads", "episodes", "attempts"] as const)("%s CSV has the documented header and as many rows as JSON", async (kind) => {
    const csv = parseCsv((await download(`/api/v1/exports/${kind}?${RANGE}&format=csv`)).text);
    const json = JSON.parse((await download(`/api/v1/exports/${kind}?${RANGE}&format=json`)).text) as unknown[];
    expect(csv[0]).toEqual([...EXPORT_COLUMNS[kind]]);
    expect(csv.slice(1)).toHaveLength(json.length);
  });

  it("neutralises spreadsheet formulas in CSV and keeps them verbatim in JSON", async () => {
    const csv = parseCsv((await download(`/api/v1/exports/threads?format=csv`)).text);
    const title = csv[0].indexOf("title");
    expect(csv.slice(1).map((row) => row[title])).toEqual([
      `'=HYPERLINK("http://evil.example","click")`,
      "'-2+3 capacity refactor",
      "'@docs rewrite",
    ]);
    const json = JSON.parse((await download(`/api/v1/exports/threads?format=json`)).text) as { title: string }[];
    expect(json[0].title).toBe('=HYPERLINK("http://evil.example","click")');
  });

  it("attempts carry their advice, gap, earliness and wait", async () => {
    const lines = (await download(`/api/v1/exports/attempts?${RANGE}&format=ndjson`)).text.trimEnd().split("\n").map((line) => JSON.parse(line));
    expect(lines).toHaveLength(7);
    expect(lines[0]).toMatchObject({
      threadId: "inc-a",
      kind: "rate_limit",
      n: 1,
      noticeAt: iso(T0 + 60_000),
      advisedDelayMs: 2_000,
      startedAt: iso(T0 + 60_230),
      retriedAt: iso(T0 + 60_230),
      actualGapMs: 230,
      earlyByMs: 1_770,
      waitMs: 230,
      httpStatus: 429,
    });
    expect(lines.map((l) => l.waitMs).reduce((a: number, b: number) => a + b, 0)).toBe(53_630);
  });

  it("episodes carry their outcome and time lost", async () => {
    const rows = JSON.parse((await download(`/api/v1/exports/episodes?${RANGE}&format=json`)).text) as Record<string, unknown>[];
    expect(rows.map((r) => [r.threadId, r.kind, r.outcome, r.attempts, r.timeLostMs])).toEqual([
      ["inc-a", "rate_limit", "recovered", 2, 2_230],
      ["inc-b", "capacity", "failed", 2, 50_000],
      ["inc-c", "rate_limit", "recovered", 1, 400],
      ["inc-c", "transport", "exhausted", 2, 1_000],
    ]);
  });

  it.each([
    ["json", "application/json"],
    ["ndjson", "application/x-ndjson"],
    ["csv", "text/csv"],
  ])("%s is a streamed attachment", async (format, type) => {
    const { response } = await download(`/api/v1/exports/attempts?format=${format}`);
    expect(response.headers.get("content-type")).toContain(type);
    expect(response.headers.get("content-disposition")).toMatch(new RegExp(`^attachment; filename="radar-attempts-\\d{8}T\\d{6}Z\\.${format}"$`));
    // Streamed: the length is not known up front.
    expect(response.headers.get("content-length")).toBeNull();
  });

  it.each([
    ["an unknown kind", "/api/v1/exports/turns", 404],
    ["an unknown format", "/api/v1/exports/threads?format=xlsx", 400],
    ["a bad filter", "/api/v1/exports/threads?status=sleepy", 400],
    ["a bad range", `/api/v1/exports/attempts?from=${iso(T0)}&to=${iso(T0 - 1)}`, 400],
  ])("%s is refused with a problem", async (_name, path, status) => {
    const response = await get(server, path);
    expect(response.status).toBe(status);
    expect(response.body.detail).toBeTruthy();
  });
});

describe("one thread's timeline", () => {
  it("as NDJSON: the thread, then episodes, attempts and events in time order", async () => {
    const sourceId = (await get(server, "/api/v1/threads/inc-c")).body.thread.sourceId;
    const { response, text } = await download(`/api/v1/threads/inc-c/export?source=${sourceId}&format=ndjson`);
    expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="radar-thread-inc-c-/);
    const [thread, ...timeline] = text.trimEnd().split("\n").map((line) => JSON.parse(line));
    expect(thread).toMatchObject({ record: "thread", threadId: "inc-c", provider: "anthropic", title: "@docs rewrite" });
    expect(timeline.map((r) => `${r.record}:${r.type ?? r.outcome ?? r.n}`)).toEqual([
      "event:turn.started",
      "episode:recovered",
      "attempt:1",
      "event:retry",
      "event:attempt",
      "event:progress",
      "episode:exhausted",
      "attempt:1",
      "event:retry",
      "event:attempt",
      "attempt:6",
      "event:retry",
    ]);
    for (const row of timeline) expect(Object.keys(row)).toEqual([...TIMELINE_COLUMNS]);
    expect(timeline[3].raw).toMatchObject({ threadId: "inc-c", type: "retry", attempt: 1 });
  });

  it("as JSON: {thread, timeline}", async () => {
    const body = JSON.parse((await download(`/api/v1/threads/inc-a/export?format=json`)).text) as { thread: { threadId: string }; timeline: unknown[] };
    expect(body.thread.threadId).toBe("inc-a");
    // One episode, its two attempts and the thread's seven events.
    expect(body.timeline).toHaveLength(1 + 2 + 7);
  });

  it("as CSV: the timeline columns, formulas neutralised", async () => {
    const rows = parseCsv((await download(`/api/v1/threads/inc-b/export?format=csv`)).text);
    expect(rows[0]).toEqual([...TIMELINE_COLUMNS]);
    const message = rows[0].indexOf("message");
    expect(rows.slice(1).map((r) => r[message])).toContain("Model at capacity");
  });

  it("an unknown thread is a 404", async () => {
    expect((await get(server, "/api/v1/threads/nope/export?format=csv")).status).toBe(404);
  });
});

describe("compression", () => {
  // The listener gzips an export as it streams for a client that takes gzip; the bytes a client reads are the same either way.
  it.each([`/api/v1/exports/attempts?${RANGE}&format=ndjson`, `/api/v1/exports/threads?format=csv`, `/api/v1/threads/inc-c/export?format=json`, `/api/v1/exports/audit?format=csv`])(
    "%s: identical content with and without Accept-Encoding: gzip",
    async (path) => {
      const plain = await server.fetch(path, { headers: { "accept-encoding": "identity" } });
      const gzipped = await server.fetch(path, { headers: { "accept-encoding": "gzip" } });
      expect([plain.status, gzipped.status]).toEqual([200, 200]);
      expect(plain.headers.get("content-encoding")).toBeNull();
      expect(plain.headers.get("vary")?.toLowerCase()).toContain("accept-encoding");
      expect(gzipped.headers.get("content-encoding")).toBe("gzip");
      expect(gzipped.headers.get("vary")?.toLowerCase()).toContain("accept-encoding");
      const [a, b] = [await plain.text(), await gzipped.text()];
      expect(a.length).toBeGreaterThan(0);
      expect(b).toBe(a);
    },
  );
});
