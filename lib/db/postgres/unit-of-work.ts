import type pg from "pg";
import { alertRowsOn } from "./alerts";
import { auditRowsOn } from "./audit";
import { directiveRowsOn } from "./directives";
import { episodeRowsOn } from "./episodes";
import { eventRowsOn } from "./events";
import { heldIncidentSavesOn, incidentRowsOn } from "./incidents";
import { limitRowsOn } from "./limits";
import { inTransaction } from "./pool";
import { processQueue } from "../queue";
import { quarantineRowsOn } from "./quarantine";
import { rollupRowsOn, type RollupRowsOn } from "./rollups";
import { sourceRowsOn } from "./sources";
import { threadJoinRowsOn } from "./thread-join";
import { heldThreadSavesOn, lookaheadKey, threadLookahead, threadRowsOn } from "./thread-state";
import { txLocks } from "./locks";
import { OTLP_FORMAT } from "@/lib/ingest/types";

/**
 * A unit of work on PostgreSQL (the contract is lib/db/unit-of-work.ts's): one pooled connection
 * inside BEGIN … COMMIT, ROLLBACK when `work` throws, and a `Tx` whose methods answer promises.
 *
 * Within this process, units of work run one after another, as on SQLite (the queue below), so a
 * caller sees the same order and never two of its own units of work interleaving. Across
 * instances on one database, each unit of work locks what it reads to change (locks.ts): the
 * threads it steps and, while it checks a batch's keys, the source.
 */

const unitQueue = processQueue("pgUnitQueue");

/**
 * lib/db/unit-of-work.ts hands its `work`, typed for its `Tx`, to this function, which compiles
 * only while this handle has every method of the SQLite one with the same parameters and answers.
 */
export function postgresTransaction<T>(work: (tx: PostgresTx) => Promise<T>): Promise<T> {
  return unitQueue.run(() =>
    inTransaction(async (client) => {
      const { tx, flush } = txOn(client);
      const result = await work(tx);
      await flush();
      return result;
    }),
  );
}

/**
 * Writes a unit of work holds back, to write many rows in one statement: the threads it creates
 * and its thread saves (thread-state.ts), the batch's event rows (events.ts) and its incident
 * saves (incidents.ts). Before any other method runs, what is held is written, created threads
 * first (events and saves name them), then events (a thread's row names its open progress event),
 * so whatever that method reads or changes sees them; the commit writes the last ones. Only the
 * methods below skip some of that, because they read and write nothing held:
 * - creations, events, thread and incident saves go on being held through their own methods;
 * - finding a thread named ahead (expectThreads) reads nothing: it was read then; a usage window's
 *   reset (windowResetBetween) reads only usage windows, which are never held;
 * - finding, creating and locking threads and reading a source's reach read no event (the held
 *   threads are written before them all the same);
 * - joining a path reads nothing for a thread no other source shares an id with (known from
 *   expectThreads), and otherwise only other sources' events, unless the thread is an
 *   OpenTelemetry one (thread-join.ts), so the held events need writing first only when they are
 *   not all of the thread's source or the line is OpenTelemetry's.
 */
const HOLDS_ALL = new Set(["insertEvent", "saveThread", "noticesSeen", "saveIncident", "createThread", "windowResetBetween"]);
const READS_NO_EVENT = new Set(["findThread", "threadById", "expectThreads", "sourceReach"]);

function txOn(client: pg.ClientBase): { tx: PostgresTx; flush: () => Promise<void> } {
  const locks = txLocks(client);
  const ahead = threadLookahead();
  const events = eventRowsOn(client, locks);
  const rollups = rollupRowsOn(client);
  const threadRows = threadRowsOn(client, rollups, locks, ahead);
  const threadSaves = heldThreadSavesOn(client, threadRows, rollups);
  const incidentSaves = heldIncidentSavesOn(client);
  const methods = {
    ...methodsOn(client, events.rows, rollups, threadRows),
    saveThread: threadSaves.saveThread,
    noticesSeen: threadSaves.noticesSeen,
    saveIncident: incidentSaves.saveIncident,
  };
  const flushThreads = async () => {
    await threadRows.flushCreations();
    await threadSaves.flush();
  };
  const flushHeld = async () => {
    await threadRows.flushCreations();
    await events.flush();
    await threadSaves.flush();
    await incidentSaves.flush();
  };
  const tx: Record<string, (...args: never[]) => unknown> = {};
  for (const [name, method] of Object.entries(methods) as [string, (...args: unknown[]) => unknown][]) {
    if (HOLDS_ALL.has(name)) tx[name] = method;
    else if (name === "findThread")
      tx[name] = async (...args: unknown[]) => {
        const [sourceId, externalId] = args as [string, string];
        if (!ahead.expected.has(lookaheadKey(sourceId, externalId))) await flushThreads();
        return method(...args);
      };
    else if (READS_NO_EVENT.has(name))
      tx[name] = async (...args: unknown[]) => {
        await flushThreads();
        return method(...args);
      };
    else if (name === "joinPaths")
      tx[name] = async (...args: unknown[]) => {
        const [thread, format] = args as [{ sourceId: string; externalId: string; joinedTo: number | null }, string];
        if (ahead.alone.has(lookaheadKey(thread.sourceId, thread.externalId))) return { joinedTo: thread.joinedTo, changed: [] };
        if (format === OTLP_FORMAT || !events.holdsOnly(thread.sourceId)) {
          await threadRows.flushCreations();
          await events.flush();
        }
        await flushThreads();
        return method(...args);
      };
    else
      tx[name] = async (...args: unknown[]) => {
        await flushHeld();
        return method(...args);
      };
  }
  // The held rows first: the rollups' shared rows are the last locks a unit of work takes (rollups.ts).
  const flush = async () => {
    await flushHeld();
    await rollups.flush();
  };
  return { tx: tx as PostgresTx, flush };
}

export type PostgresTx = ReturnType<typeof methodsOn>;

function methodsOn(client: pg.ClientBase, eventRows: ReturnType<typeof eventRowsOn>["rows"], rollups: RollupRowsOn, threadRows: ReturnType<typeof threadRowsOn>) {
  const audit = auditRowsOn(client);
  return {
    ...eventRows,
    ...threadRows,
    ...episodeRowsOn(client, rollups),
    ...directiveRowsOn(client),
    ...sourceRowsOn(client),
    ...audit,
    ...quarantineRowsOn(client),
    ...limitRowsOn(client),
    ...incidentRowsOn(client),
    ...threadJoinRowsOn(client, rollups),
    ...alertRowsOn(client, audit),
    noticesSeen: rollups.noticesSeen,
    noticeFacts: rollups.noticeFacts,
  };
}
