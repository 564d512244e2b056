import type { EpisodeRecord } from "@/lib/retry";
import { attemptsMadeOf, type TurnRow } from "./records/episodes";
import { codeText } from "./records/events";
import { rollupRows } from "./rollups";
import { pluck, statement } from "./statement";

export type { TurnRow } from "./records/episodes";

/** Episodes with their attempts, and turns: rows derived from a thread's events by the engine. */

const UPSERT_EPISODE = `INSERT INTO "Episode" (threadId, seq, turnId, kind, policy, maxAttempts, startedAt, endedAt, outcome, outcomeCode,
    outcomeReason, resetAt, attemptsMade, reportedRetryMs)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (threadId, seq) DO UPDATE SET turnId = excluded.turnId, kind = excluded.kind, policy = excluded.policy,
    maxAttempts = excluded.maxAttempts, startedAt = excluded.startedAt, endedAt = excluded.endedAt,
    outcome = excluded.outcome, outcomeCode = excluded.outcomeCode, outcomeReason = excluded.outcomeReason,
    resetAt = excluded.resetAt, attemptsMade = excluded.attemptsMade, reportedRetryMs = excluded.reportedRetryMs
  RETURNING id`;
const UPSERT_ATTEMPT = `INSERT INTO "Attempt" (episodeId, n, noticeAt, advisedDelayMs, expectedAt, estimated, deadlineAt, startedAt,
    earlyByMs, httpStatus, code, message)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (episodeId, n) DO UPDATE SET noticeAt = excluded.noticeAt, advisedDelayMs = excluded.advisedDelayMs,
    expectedAt = excluded.expectedAt, estimated = excluded.estimated, deadlineAt = excluded.deadlineAt,
    startedAt = excluded.startedAt, earlyByMs = excluded.earlyByMs, httpStatus = excluded.httpStatus,
    code = excluded.code, message = excluded.message`;
const DELETE_EPISODES = `DELETE FROM "Episode" WHERE threadId = ?`;
const UPSERT_TURN = `INSERT INTO "Turn" (threadId, externalId, status, startedAt, endedAt) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (threadId, externalId) DO UPDATE SET status = excluded.status, endedAt = excluded.endedAt`;

const roundOrNull = (ms: number | null | undefined) => (ms == null ? null : Math.round(ms));

/** The episode and turn statements of a unit of work (see unit-of-work.ts); synchronous on SQLite. */
export const episodeRows = {
  /**
   * Upserts episodes with their attempts; the rollups take the difference: their stored facts
   * out, their new facts in. The stored facts of every episode are read, new ones included (they
   * have none): an episode's seq counts the thread's episodes, so nothing but the rows tells
   * which are stored (a thread whose state was reset may number its episodes over again).
   */
  saveEpisodes(episodes: readonly { threadId: number; episode: EpisodeRecord }[]): void {
    const keys = episodes.map(({ threadId, episode }) => [threadId, episode.seq] as const);
    const applyChange = rollupRows.episodeFactsChange(keys);
    for (const { threadId, episode } of episodes) upsertEpisode(threadId, episode);
    applyChange(keys);
  },

  /** Before a replay, the derived episode rows of a thread are rebuilt from its events. */
  deleteEpisodes(threadId: number): void {
    rollupRows.removeEpisodeFacts(threadId);
    statement(DELETE_EPISODES).run(threadId);
  },

  saveTurns(turns: readonly TurnRow[]): void {
    const upsert = statement(UPSERT_TURN);
    for (const turn of turns) upsert.run(turn.threadId, turn.turnId, turn.status, turn.startedAt, turn.endedAt);
  },
};

function upsertEpisode(threadId: number, episode: EpisodeRecord): void {
  // Positional parameters, in the column order of the statements above.
  const episodeId = pluck(UPSERT_EPISODE).get(
    threadId,
    episode.seq,
    episode.turnId ?? null,
    episode.kind,
    episode.policy,
    episode.maxAttempts ?? null,
    episode.startedAt,
    episode.endedAt ?? null,
    episode.outcome ?? null,
    episode.outcomeCode ?? null,
    episode.outcomeReason ?? null,
    episode.resetAt ?? null,
    attemptsMadeOf(episode),
    roundOrNull(episode.reportedRetryMs),
  ) as number;
  const upsertAttempt = statement(UPSERT_ATTEMPT);
  for (const attempt of episode.attempts) {
    upsertAttempt.run(
      episodeId,
      attempt.n,
      attempt.noticeAt,
      roundOrNull(attempt.advisedDelayMs),
      attempt.expectedAt ?? null,
      attempt.estimated ? 1 : 0,
      attempt.deadlineAt ?? null,
      attempt.startedAt ?? null,
      roundOrNull(attempt.earlyByMs),
      attempt.httpStatus ?? null,
      codeText(attempt.code),
      attempt.message ?? null,
    );
  }
}
