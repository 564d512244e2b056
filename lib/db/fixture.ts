import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openDatabase, type DatabaseHandles } from "./client";
import { rebuildRollups } from "./rollups";

/**
 * The insights SQL against a real migrated SQLite file with a small, hand-computed data set:
 * three threads, seven retry notices, four episodes, six attempts, inside the hour from T0.
 */
export const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);
export const M = 60_000;
export const NOW = T0 + 2 * 60 * M;
export const RANGE = `from=${new Date(T0).toISOString()}&to=${new Date(T0 + 60 * M).toISOString()}`;

export function seed(sql: DatabaseHandles["sql"]): void {
  const source = sql.prepare(`INSERT INTO "Source" (id, name, createdAt) VALUES (?, ?, ?)`);
  source.run("src-codex", "codex@build-7", T0);
  source.run("src-claude", "claude@ci", T0);
  const thread = sql.prepare(
    `INSERT INTO "Thread" (id, sourceId, externalId, title, agent, provider, model, status, retryKind, lastErrorKind,
       lastErrorMessage, deadlineAt, state, createdAt, updatedAt)
     VALUES (@id, @sourceId, @externalId, @title, @agent, @provider, @model, @status, @retryKind, @lastErrorKind,
       @lastErrorMessage, @deadlineAt, '{}', @at, @at)`,
  );
  const base = { retryKind: null, lastErrorKind: null, lastErrorMessage: null, deadlineAt: null };
  thread.run({ ...base, id: 1, sourceId: "src-codex", externalId: "th-1", title: "=HYPERLINK(\"http://evil\")", agent: "codex", provider: "openai", model: "gpt-5", status: "recovered", lastErrorKind: "rate_limit", at: T0 + 3 * M });
  thread.run({ ...base, id: 2, sourceId: "src-codex", externalId: "th-2", title: "refactor a_b", agent: "codex", provider: "openai", model: "gpt-5-mini", status: "retrying", retryKind: "capacity", deadlineAt: NOW - M, at: T0 + 10 * M });
  thread.run({ ...base, id: 3, sourceId: "src-claude", externalId: "th-3", title: "Docs", agent: "claude", provider: "anthropic", model: "claude-opus", status: "exhausted", lastErrorKind: "rate_limit", lastErrorMessage: "429 Too Many Requests", at: T0 + 7 * M });
  thread.run({ ...base, id: 4, sourceId: "src-claude", externalId: "th-4", title: null, agent: null, provider: null, model: null, status: "retrying", retryKind: "transport", deadlineAt: NOW + M, at: T0 + 90 * M });

  let eventId = 0;
  const event = sql.prepare(
    `INSERT INTO "Event" (sourceId, threadId, idempotencyKey, format, type, at, receivedAt, kind, attempt, message, raw, normalized)
     VALUES (?, ?, ?, 'canonical', ?, ?, ?, ?, ?, ?, ?, '{}')`,
  );
  const ev = (threadId: number, type: string, at: number, kind: string | null, attempt: number | null = null, message: string | null = null) => {
    const sourceId = threadId <= 2 ? "src-codex" : "src-claude";
    event.run(sourceId, threadId, `k${++eventId}`, type, at, at, kind, attempt, message, JSON.stringify({ type, n: eventId }));
  };
  ev(1, "retry", T0 - M, "rate_limit", 1); // before the range
  ev(1, "retry", T0 + M, "rate_limit", 1);
  ev(1, "attempt", T0 + M + 230, null, 1);
  ev(1, "retry", T0 + 2 * M, "rate_limit", 2);
  ev(1, "progress", T0 + 3 * M, null);
  ev(2, "retry", T0 + M, "capacity", 1, "-1+1 overloaded");
  ev(2, "retry", T0 + 10 * M, "capacity", 2);
  ev(3, "retry", T0 + 5 * M, "rate_limit", 1);
  ev(3, "retry", T0 + 5 * M + 30_000, "transport", 2);
  ev(3, "retry", T0 + 6 * M, null, 3);
  ev(3, "retry", T0 + 60 * M, "rate_limit", 4); // exactly at the range end: excluded

  const episode = sql.prepare(
    `INSERT INTO "Episode" (id, threadId, seq, kind, policy, startedAt, endedAt, outcome) VALUES (?, ?, ?, ?, 'default', ?, ?, ?)`,
  );
  episode.run(1, 1, 1, "rate_limit", T0 + M, T0 + 3 * M, "recovered");
  episode.run(2, 2, 1, "capacity", T0 + M, null, null);
  episode.run(3, 3, 1, "rate_limit", T0 + 5 * M, T0 + 7 * M, "exhausted");
  episode.run(4, 1, 2, "capacity", T0 + 15 * M, T0 + 20 * M, "failed");
  const attempt = sql.prepare(
    `INSERT INTO "Attempt" (episodeId, n, noticeAt, advisedDelayMs, startedAt, earlyByMs, message) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  attempt.run(1, 1, T0 + M, 2_000, T0 + M + 230, 1_770, null); // 1.77 s early
  attempt.run(1, 2, T0 + 2 * M, 2_000, T0 + 2 * M + 2_000, null, null);
  attempt.run(2, 1, T0 + M, 30_000, null, null, "@capacity"); // waits until the next notice: 9 min
  attempt.run(2, 2, T0 + 10 * M, null, null, null, null); // open: waits until the range end, 50 min
  attempt.run(3, 1, T0 + 5 * M, 1_000, T0 + 5 * M + 400, 600, null);
  attempt.run(3, 2, T0 + 5 * M + 30_000, 1_000, null, null, null); // until the episode ended: 90 s

  const directive = sql.prepare(
    `INSERT INTO "Directive" (id, sourceId, threadId, dedupeKey, kind, origin, reason, state, result, createdAt) VALUES (?, ?, ?, ?, ?, 'policy', 'r', ?, ?, ?)`,
  );
  directive.run("d1", "src-claude", 3, "k1", "interrupt", "acknowledged", "acknowledged", T0 + 7 * M);
  directive.run("d2", "src-codex", 2, "k2", "interrupt", "pending", null, T0 + 11 * M);
}


/** A migrated database in a temporary folder, seeded with the data set above. */
export function openSeeded(): { handles: DatabaseHandles; close: () => Promise<void> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-insights-"));
  const handles = openDatabase(path.join(dir, "radar.db"));
  seed(handles.sql);
  // The rows above bypass the writers that keep rollups: rebuilt from them, as after an import.
  handles.sql.transaction(() => rebuildRollups(handles.sql))();
  return {
    handles,
    close: async () => {
      await handles.prisma.$disconnect();
      handles.sql.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
