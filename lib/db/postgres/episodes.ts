import type pg from "pg";
import type { EpisodeRecord } from "@/lib/retry";
import type { TurnRow } from "../records/episodes";
import { codeText } from "../records/events";
import type { RollupRowsOn } from "./rollups";
import { timestampFromMs } from "./time";

/** lib/db/episodes.ts's unit-of-work statements on PostgreSQL: an episode's attempts in one multi-row upsert. */

const UPSERT_EPISODE = `INSERT INTO "Episode" ("threadId", seq, "turnId", kind, policy, "maxAttempts", "startedAt", "endedAt", outcome, "outcomeCode",
    "outcomeReason", "resetAt")
  VALUES ($1, $2, $3, $4, $5, $6, ${timestampFromMs("$7")}, ${timestampFromMs("$8")}, $9, $10, $11, ${timestampFromMs("$12")})
  ON CONFLICT ("threadId", seq) DO UPDATE SET "turnId" = excluded."turnId", kind = excluded.kind, policy = excluded.policy,
    "maxAttempts" = excluded."maxAttempts", "startedAt" = excluded."startedAt", "endedAt" = excluded."endedAt",
    outcome = excluded.outcome, "outcomeCode" = excluded."outcomeCode", "outcomeReason" = excluded."outcomeReason",
    "resetAt" = excluded."resetAt"
  RETURNING id`;
const UPSERT_ATTEMPTS = `INSERT INTO "Attempt" ("episodeId", n, "noticeAt", "advisedDelayMs", "expectedAt", estimated, "deadlineAt", "startedAt",
    "earlyByMs", "httpStatus", code, message)
  SELECT $1, n, ${timestampFromMs(`"noticeAt"`)}, "advisedDelayMs", ${timestampFromMs(`"expectedAt"`)}, estimated, ${timestampFromMs(`"deadlineAt"`)},
    ${timestampFromMs(`"startedAt"`)}, "earlyByMs", "httpStatus", code, message
  FROM unnest($2::int[], $3::float8[], $4::int[], $5::float8[], $6::boolean[], $7::float8[], $8::float8[], $9::int[], $10::int[], $11::text[], $12::text[])
    AS r(n, "noticeAt", "advisedDelayMs", "expectedAt", estimated, "deadlineAt", "startedAt", "earlyByMs", "httpStatus", code, message)
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
  async function upsertEpisode(threadId: number, episode: EpisodeRecord): Promise<void> {
    const { rows } = await client.query<{ id: number }>(UPSERT_EPISODE, [
      threadId, episode.seq, episode.turnId ?? null, episode.kind, episode.policy, episode.maxAttempts ?? null, episode.startedAt,
      episode.endedAt ?? null, episode.outcome ?? null, episode.outcomeCode ?? null, episode.outcomeReason ?? null, episode.resetAt ?? null,
    ]);
    const attempts = episode.attempts;
    if (!attempts.length) return;
    const column = <T>(value: (attempt: (typeof attempts)[number]) => T) => attempts.map(value);
    await client.query(UPSERT_ATTEMPTS, [
      rows[0].id,
      column((a) => a.n),
      column((a) => a.noticeAt),
      column((a) => roundOrNull(a.advisedDelayMs)),
      column((a) => a.expectedAt ?? null),
      column((a) => Boolean(a.estimated)),
      column((a) => a.deadlineAt ?? null),
      column((a) => a.startedAt ?? null),
      column((a) => roundOrNull(a.earlyByMs)),
      column((a) => a.httpStatus ?? null),
      column((a) => codeText(a.code)),
      column((a) => a.message ?? null),
    ]);
  }

  return {
    /** As on SQLite: the rollups take the difference, stored facts out before, new facts in after. */
    async saveEpisodes(episodes: readonly { threadId: number; episode: EpisodeRecord }[], newFrom: number | null = null): Promise<void> {
      const keys = episodes.map(({ threadId, episode }) => [threadId, episode.seq] as const);
      await rollups.episodeFacts(newFrom === null ? keys : keys.filter(([, seq]) => seq < newFrom), -1);
      for (const { threadId, episode } of episodes) await upsertEpisode(threadId, episode);
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
