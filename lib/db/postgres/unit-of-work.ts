import type pg from "pg";
import { alertRowsOn } from "./alerts";
import { auditRowsOn } from "./audit";
import { directiveRowsOn } from "./directives";
import { episodeRowsOn } from "./episodes";
import { eventRowsOn } from "./events";
import { incidentRowsOn } from "./incidents";
import { limitRowsOn } from "./limits";
import { inTransaction } from "./pool";
import { processQueue } from "../queue";
import { quarantineRowsOn } from "./quarantine";
import { rollupRowsOn, type RollupRowsOn } from "./rollups";
import { sourceRowsOn } from "./sources";
import { threadJoinRowsOn } from "./thread-join";
import { threadRowsOn } from "./thread-state";

/**
 * A unit of work on PostgreSQL (the contract is lib/db/unit-of-work.ts's): one pooled connection
 * inside BEGIN … COMMIT, ROLLBACK when `work` throws, and a `Tx` whose methods answer promises.
 *
 * Within this process, units of work run one after another, as on SQLite (the queue below), so a
 * caller sees the same order and never two of its own units of work interleaving. Across
 * instances on one database, each unit of work locks what it reads to change (locks.ts): the
 * threads it steps and, while it checks a batch's keys, the source.
 */

const unitQueue = processQueue("__radarPgUnitQueue");

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
 * The handle of a unit of work on `client`. The event rows a batch inserts are held back and
 * written together (events.ts): every other method writes them first, so whatever it reads or
 * changes sees them, and the commit writes the last ones.
 */
function txOn(client: pg.ClientBase): { tx: PostgresTx; flush: () => Promise<void> } {
  const events = eventRowsOn(client);
  const rollups = rollupRowsOn(client);
  const methods = methodsOn(client, events.rows, rollups);
  const tx: Record<string, (...args: never[]) => unknown> = {};
  for (const [name, method] of Object.entries(methods) as [string, (...args: unknown[]) => unknown][]) {
    tx[name] =
      name === "insertEvent"
        ? method
        : async (...args: unknown[]) => {
            await events.flush();
            return method(...args);
          };
  }
  // The events first: the rollups' shared rows are the last locks a unit of work takes (rollups.ts).
  const flush = async () => {
    await events.flush();
    await rollups.flush();
  };
  return { tx: tx as PostgresTx, flush };
}

export type PostgresTx = ReturnType<typeof methodsOn>;

function methodsOn(client: pg.ClientBase, eventRows: ReturnType<typeof eventRowsOn>["rows"], rollups: RollupRowsOn) {
  const audit = auditRowsOn(client);
  return {
    ...eventRows,
    ...threadRowsOn(client, rollups),
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
