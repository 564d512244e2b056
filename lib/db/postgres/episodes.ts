import type pg from "pg";
import { arrayLiteral } from "./array-literal";
import type { EpisodeRecord } from "@/lib/retry";
import { attemptsMadeOf, type TurnRow } from "../records/episodes";
import { codeText } from "../records/events";
import type { RollupRowsOn } from "./rollups";
import { timestampFromMs } from "./time";

/** lib/db/episodes.ts's unit-of-work statements on PostgreSQL: a unit of work's episodes in one multi-row upsert, their attempts in another. */

const EPISODE_SET = `"turnId" = excluded."turnId", kind = excluded.kind, policy = excluded.policy,
    "maxAttempts" = excluded."maxAttempts", "startedAt" = excluded."startedAt", "endedAt" = excluded."endedAt",
    outcome = excluded.outcome, "outcomeCode" = excluded."outcomeCode", "outcomeReason" = excluded."outcomeReason",
    "resetAt" = excluded."resetAt", "attemptsMade" = excluded."attemptsMade", "reportedRetryMs" = excluded."reportedRetryMs"`;
/** Every episode of a unit of work in one statement (no key twice: see saveEpisodes). */
const UPSERT_EPISODES = `INSERT INTO "Episode" ("threadId", seq, "turnId", kind, policy, "maxAttempts", "startedAt", "endedAt", outcome, "outcomeCode",
    "outcomeReason", "resetAt", "attemptsMade", "reportedRetryMs")
  SELECT "threadId", seq, "turnId", kind, policy, "maxAttempts", ${timestampFromMs(`"startedAt"`)}, ${timestampFromMs(`"endedAt"`)}, outcome,
    "outcomeCode", "outcomeReason", ${timestampFromMs(`"resetAt"`)}, "attemptsMade", "reportedRetryMs"
  FROM unnest($1::int[], $2::int[], $3::text[], $4::text[], $5::text[], $6::int[], $7::float8[], $8::float8[], $9::text[], $10::text[], $11::text[],
    $12::float8[], $13::int[], $14::int[]) WITH ORDINALITY
    AS r("threadId", seq, "turnId", kind, policy, "maxAttempts", "startedAt", "endedAt", outcome, "outcomeCode", "outcomeReason", "resetAt",
      "attemptsMade", "reportedRetryMs", i)
  ORDER BY i
  ON CONFLICT ("threadId", seq) DO UPDATE SET ${EPISODE_SET}
  RETURNING id, "threadId", seq`;
/** Their attempts in one more: each row names its episode. */
const UPSERT_ATTEMPTS = `INSERT INTO "Attempt" ("episodeId", n, "noticeAt", "advisedDelayMs", "expectedAt", estimated, "deadlineAt", "startedAt",
    "earlyByMs", "httpStatus", code, message)
  SELECT "episodeId", n, ${timestampFromMs(`"noticeAt"`)}, "advisedDelayMs", ${timestampFromMs(`"expectedAt"`)}, estimated, ${timestampFromMs(`"deadlineAt"`)},
    ${timestampFromMs(`"startedAt"`)}, "earlyByMs", "httpStatus", code, message
  FROM unnest($1::int[], $2::int[], $3::float8[], $4::int[], $5::float8[], $6::boolean[], $7::float8[], $8::float8[], $9::int[], $10::int[], $11::text[],
    $12::text[]) WITH ORDINALITY
    AS r("episodeId", n, "noticeAt", "advisedDelayMs", "expectedAt", estimated, "deadlineAt", "startedAt", "earlyByMs", "httpStatus", code, message, i)
  ORDER BY i
  ON CONFLICT ("episodeId", n) DO UPDATE SET "noticeAt" = excluded."noticeAt", "advisedDelayMs" = excluded."advisedDelayMs",
    "expectedAt" = excluded."expectedAt", estimated = excluded.estimated, "deadlineAt" = excluded."deadlineAt",
    "startedAt" = excluded."startedAt", "earlyByMs" = excluded."earlyByMs", "httpStatus" = excluded."httpStatus",
    code = excluded.code, message = excluded.message`;
const DELETE_EPISODES = `DELETE FROM "Episode" WHERE "threadId" = $1`;
const UPSERT_TURNS = `INSERT INTO "Turn" ("threadId", "externalId", status, "startedAt", "endedAt")
  SELECT "threadId", "externalId", status, ${timestampFromMs(`"startedAt"`)}, ${timestampFromMs(`"endedAt"`)}
  FROM unnest($1::int[], $2::text[], $3::text[], $4::float8[], $5::float8[]) AS r("threadId", "externalId", status, "startedAt", "endedAt")
  ON CONFLICT ("threadId", "externalId") DO UPDATE SET status = excluded.status, "endedAt" = excluded."endedAt"`;

const roundOrNull = (ms: number | null | undefined) => (ms == null ? null : Math.round(ms));

export function episodeRowsOn(client: pg.ClientBase, rollups: RollupRowsOn) {
  /** One upsert for the episodes, one for their attempts: two round trips however many there are. */
  async function upsertEpisodes(episodes: readonly { threadId: number; episode: EpisodeRecord }[]): Promise<void> {
    const column = <T>(value: (episode: EpisodeRecord) => T) => episodes.map(({ episode }) => value(episode));
    const { rows } = await client.query<{ id: number; threadId: number; seq: number }>(UPSERT_EPISODES, [
      episodes.map(({ threadId }) => threadId),
      column((e) => e.seq),
      column((e) => e.turnId ?? null),
      column((e) => e.kind),
      column((e) => e.policy),
      column((e) => e.maxAttempts ?? null),
      column((e) => e.startedAt),
      column((e) => e.endedAt ?? null),
      column((e) => e.outcome ?? null),
      column((e) => e.outcomeCode ?? null),
      column((e) => e.outcomeReason ?? null),
      column((e) => e.resetAt ?? null),
      column(attemptsMadeOf),
      column((e) => roundOrNull(e.reportedRetryMs)),
    ].map(arrayLiteral));
    const ids = new Map(rows.map((row) => [`${row.threadId}\0${row.seq}`, row.id]));
    const attempts = episodes.flatMap(({ threadId, episode }) => episode.attempts.map((attempt) => ({ episodeId: ids.get(`${threadId}\0${episode.seq}`)!, attempt })));
    if (!attempts.length) return;
    const field = <T>(value: (attempt: EpisodeRecord["attempts"][number]) => T) => attempts.map(({ attempt }) => value(attempt));
    await client.query(UPSERT_ATTEMPTS, [
      attempts.map(({ episodeId }) => episodeId),
      field((a) => a.n),
      field((a) => a.noticeAt),
      field((a) => roundOrNull(a.advisedDelayMs)),
      field((a) => a.expectedAt ?? null),
      field((a) => Boolean(a.estimated)),
      field((a) => a.deadlineAt ?? null),
      field((a) => a.startedAt ?? null),
      field((a) => roundOrNull(a.earlyByMs)),
      field((a) => a.httpStatus ?? null),
      field((a) => codeText(a.code)),
      field((a) => a.message ?? null),
    ].map(arrayLiteral));
  }

  return {
    /** As on SQLite: the rollups take the difference, stored facts out before, new facts in after. */
    async saveEpisodes(episodes: readonly { threadId: number; episode: EpisodeRecord }[]): Promise<void> {
      const keys = episodes.map(({ threadId, episode }) => [threadId, episode.seq] as const);
      await rollups.episodeFacts(keys, -1);
      // One upsert may not meet a key twice: an episode saved twice is written in turn, as it was saved.
      const distinct = new Set(keys.map(([threadId, seq]) => `${threadId}\0${seq}`)).size === keys.length;
      if (distinct) {
        if (episodes.length) await upsertEpisodes(episodes);
      } else for (const saved of episodes) await upsertEpisodes([saved]);
      await rollups.episodeFacts(keys, 1);
    },

    async deleteEpisodes(threadId: number): Promise<void> {
      await rollups.removeEpisodeFacts(threadId);
      await client.query(DELETE_EPISODES, [threadId]);
    },

    async saveTurns(turns: readonly TurnRow[]): Promise<void> {
      if (!turns.length) return;
      // One upsert may not meet a key twice: the last save of a turn wins, its start kept from the first (as one-by-one upserts would).
      const byKey = new Map<string, TurnRow>();
      for (const turn of turns) {
        const key = JSON.stringify([turn.threadId, turn.turnId]);
        const first = byKey.get(key);
        byKey.set(key, first ? { ...turn, startedAt: first.startedAt } : turn);
      }
      const rows = [...byKey.values()];
      await client.query(UPSERT_TURNS, [rows.map((t) => t.threadId), rows.map((t) => t.turnId), rows.map((t) => t.status), rows.map((t) => t.startedAt), rows.map((t) => t.endedAt)]);
    },
  };
}
