import { alertRows } from "./alerts";
import { auditRows } from "./audit";
import { beginImmediate, db, isWriterTail, serialized } from "./client";
import { directiveRows } from "./directives";
import { episodeRows } from "./episodes";
import { incidentRows } from "./incidents";
import { limitRows } from "./limits";
import { eventRows } from "./events";
import { quarantineRows } from "./quarantine";
import { rollupRows } from "./rollups";
import { sourceRows } from "./sources";
import { threadJoinRows } from "./thread-join";
import { postgresTransaction } from "./postgres/unit-of-work";
import { currentStore } from "./store";
import { threadRows } from "./thread-state";
import { shared } from "@/lib/process-state";

/**
 * A unit of work: an ingest batch, an operator action or a watchdog pass, committed as one.
 *
 * The contract, for this SQLite store and for any other behind lib/db:
 * - `transaction(work)` is asynchronous for its callers; it resolves once `work`'s writes are
 *   committed (rejects, with nothing written, when `work` throws or rejects).
 * - Units of work of one process never interleave with each other: each starts after everything
 *   queued before it has ended. On SQLite nothing else uses the connection meanwhile either (the
 *   queue in client.ts); on PostgreSQL other writes (usage counting, retention, the rollup
 *   rebuild, the directive claim) run beside them on the pool, kept apart by the locks of
 *   lib/db/postgres/locks.ts and by their own transactions.
 * - `work` receives the transaction's handle, `Tx`, does everything through it, and awaits every
 *   call or chains it with `andThen`: a `Tx` method may answer with a value or a promise. On SQLite
 *   (better-sqlite3: one connection, a single writer) every method answers synchronously and the
 *   awaits only pass through microtasks: the event loop takes no new request while a unit of work
 *   runs (between the members of a group it may), and the queue keeps every other use of the
 *   connection out until the group commits. On PostgreSQL (node-postgres,
 *   lib/db/postgres/unit-of-work.ts) each unit of work gets a pooled connection inside BEGIN …
 *   COMMIT and a `Tx` whose methods return native promises (which `andThen` tells from values);
 *   the pipeline does not change. Units of work of one process still run one after another (a
 *   queue of their own); those of several instances on one database lock the threads and sources
 *   they change (lib/db/postgres/locks.ts).
 */
const sqliteTx = { ...eventRows, ...threadRows, ...episodeRows, ...directiveRows, ...sourceRows, ...auditRows, ...quarantineRows, ...limitRows, ...incidentRows, ...threadJoinRows, ...alertRows, noticesSeen: rollupRows.noticesSeen, noticeFacts: rollupRows.noticeFacts };

/** A value now, or a promise of it: what a `Tx` method answers (see above). */
export type Awaitable<T> = T | Promise<T>;

/**
 * `next` of `value` now, or once its promise settles: a caller that chains answers this way makes
 * no promise where the store answered at once (lib/server/pipeline.ts, "Promises per event").
 */
export function andThen<T, U>(value: Awaitable<T>, next: (value: T) => Awaitable<U>): Awaitable<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** The handle of a unit of work: every store operation it may use, each answering now or later. */
export type Tx = {
  [K in keyof typeof sqliteTx]: (...args: Parameters<(typeof sqliteTx)[K]>) => Awaitable<ReturnType<(typeof sqliteTx)[K]>>;
};

/**
 * Work that units of work leave to the end of their commit: `run` once, after every unit of work
 * of the commit and before COMMIT, with the inputs they gave it in their order. On SQLite the
 * members of a group commit share one run (a member rolled back to its savepoint gives nothing);
 * on PostgreSQL each unit of work is a commit of its own. A run that throws loses the commit:
 * every unit of work in it is rejected, as when COMMIT fails. For work whose cost grows with what
 * it writes whole, not with its inputs: an incident, saved with every thread it holds
 * (lib/server/pipeline.ts › INCIDENTS_AT_COMMIT).
 */
export interface CommitStep<I> {
  run(tx: Tx, inputs: I[]): Promise<void>;
}

/** Leaves `input` to `step` at the end of the commit (see CommitStep). */
export type AtCommit = <I>(step: CommitStep<I>, input: I) => void;

/** Errors a commit step threw: they reject every unit of work of the commit, whichever gave the input. */
const failedInStep = new WeakSet<object>();

/** Whether `error` came from a commit step (see CommitStep), not from the unit of work it rejected. */
export function failedInCommitStep(error: unknown): boolean {
  return typeof error === "object" && error !== null && failedInStep.has(error);
}

/** The commit steps of a unit of work or a commit, each with its inputs, in the order they were first given one. */
class CommitSteps {
  readonly #inputs = new Map<CommitStep<unknown>, unknown[]>();
  #closed = false;

  readonly add: AtCommit = (step, input) => {
    // A unit of work that has ended can no longer add to its commit: the input would be lost unseen.
    if (this.#closed) throw new Error("atCommit was called after its unit of work ended");
    const inputs = this.#inputs.get(step as CommitStep<unknown>);
    if (inputs) inputs.push(input);
    else this.#inputs.set(step as CommitStep<unknown>, [input]);
  };

  /** Takes no more inputs through `add`. */
  close(): void {
    this.#closed = true;
  }

  /** Adds what `other` holds, after what this holds. */
  merge(other: CommitSteps): void {
    for (const [step, inputs] of other.#inputs) {
      const mine = this.#inputs.get(step);
      if (mine) mine.push(...inputs);
      else this.#inputs.set(step, [...inputs]);
    }
  }

  async run(tx: Tx): Promise<void> {
    this.close();
    for (const [step, inputs] of this.#inputs) {
      try {
        await step.run(tx, inputs);
      } catch (error) {
        if (typeof error === "object" && error !== null) failedInStep.add(error);
        throw error;
      }
    }
  }
}

/** Runs `work` as one unit of work on the store DATABASE_URL names (lib/db/postgres/unit-of-work.ts for PostgreSQL). */
export function transaction<T>(work: (tx: Tx, atCommit: AtCommit) => Promise<T>): Promise<T> {
  return currentStore() === "postgres" ? postgresTransaction((tx) => ownCommit(tx, work)) : sqliteTransaction(work);
}

/** `work` as a commit of its own: its commit steps run once it is done. */
async function ownCommit<T>(tx: Tx, work: (tx: Tx, atCommit: AtCommit) => Promise<T>): Promise<T> {
  const steps = new CommitSteps();
  let value: T;
  try {
    value = await work(tx, steps.add);
  } finally {
    steps.close();
  }
  await steps.run(tx);
  return value;
}

/**
 * Group commit: units of work that arrive while one is queued or running join the next
 * BEGIN IMMEDIATE … COMMIT instead of paying for their own (under many small requests, the
 * commit's WAL writes and checkpoints are most of a unit of work's cost). The members run one
 * after another in arrival order, each in a savepoint when it has company, and a member's promise
 * settles only once the whole group has committed: a member that throws is rolled back to its
 * savepoint and rejected without touching the others (alone, the transaction is rolled back).
 * Should the transaction itself be lost (SQLite rolls it back whole on a full disk or an I/O
 * error, COMMIT fails, or a commit step throws: the members' shared work, see CommitStep), every
 * member is rejected: none of them was written, so none was reported as stored.
 *
 * A group accepts members only while it has not started and nothing else was queued after it,
 * so no unit of work ever runs ahead of anything queued before it.
 *
 * A group waits one turn of the event loop before it starts (requests whose data already arrived
 * reach their unit of work meanwhile and join it) only when joining is likely: another group is
 * queued or running, or one ended during this turn. A lone unit of work starts at once, sparing
 * a single client the turn's latency.
 */
interface Member {
  work: (tx: Tx, atCommit: AtCommit) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface Group {
  members: Member[];
  /** Its place in the writer queue: while still the queue's tail, later units of work may join it. */
  queued: Promise<unknown>;
  started: boolean;
  /** Whether it waits a turn for others to join before it starts. */
  gathers: boolean;
}

// Process-wide (lib/process-state.ts), like the writer queue: every copy of this module shares one group.
const sharedForGroup = shared<{
  openGroup?: Group;
  /** Groups created and not yet ended. */
  groupsPending?: number;
  /** Set when a group ends, cleared at the next turn of the event loop. */
  groupJustEnded?: boolean;
}>("openGroup", () => ({}));

function sqliteTransaction<T>(work: (tx: Tx, atCommit: AtCommit) => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const member: Member = { work, resolve: resolve as (value: unknown) => void, reject };
    const open = sharedForGroup.openGroup;
    if (open && !open.started && isWriterTail(open.queued)) {
      open.members.push(member);
      return;
    }
    const pending = sharedForGroup.groupsPending ?? 0;
    const group: Group = { members: [member], queued: Promise.resolve(), started: false, gathers: pending > 0 || sharedForGroup.groupJustEnded === true };
    sharedForGroup.groupsPending = pending + 1;
    sharedForGroup.openGroup = group;
    group.queued = serialized(() => runGroup(group));
  });
}

async function runGroup(group: Group): Promise<void> {
  try {
    await runMembers(group);
  } finally {
    sharedForGroup.groupsPending = (sharedForGroup.groupsPending ?? 1) - 1;
    if (!sharedForGroup.groupJustEnded) {
      sharedForGroup.groupJustEnded = true;
      setImmediate(() => (sharedForGroup.groupJustEnded = false));
    }
  }
}

async function runMembers(group: Group): Promise<void> {
  if (group.gathers) await nextTurn();
  group.started = true;
  if (sharedForGroup.openGroup === group) sharedForGroup.openGroup = undefined;
  const settled: { member: Member; ok: boolean; value: unknown }[] = [];
  let sql: ReturnType<typeof db>["sql"] | null = null;
  try {
    sql = db().sql;
    // IMMEDIATE: take the write lock now, so the commit can never fail on a busy database;
    // awaited, so a lock held elsewhere never holds this thread (beginImmediate).
    await beginImmediate(sql);
    // A member alone needs no savepoint: rolling it back is rolling back the transaction. A
    // savepoint is not free: SQLite copies every page a member changes first into a statement
    // journal (2.3 of 21 ms per batch of 500 events in scripts/profile-ingest.ts, when that
    // journal was a temporary file; the writer keeps it in memory since, client.ts).
    const alone = group.members.length === 1;
    const steps = new CommitSteps();
    let turnStarted = performance.now();
    for (const [index, member] of group.members.entries()) {
      // A long group never holds the thread: once members have run for TURN_BUDGET_MS, the next
      // one waits for the next turn of the event loop (so one long member has a turn to itself).
      // The transaction stays open across turns, and nothing else reaches the writer connection
      // meanwhile (every use of it, Prisma's writes included, waits in the writer queue behind
      // this group). Quick members still share a turn: a turn per member measured slower.
      if (index > 0 && performance.now() - turnStarted >= TURN_BUDGET_MS) {
        await nextTurn();
        turnStarted = performance.now();
      }
      if (!alone) sql.exec("SAVEPOINT member");
      const own = new CommitSteps();
      try {
        const value = await member.work(sqliteTx, own.add).finally(() => own.close());
        if (!alone) sql.exec("RELEASE member");
        steps.merge(own);
        settled.push({ member, ok: true, value });
      } catch (error) {
        // Alone, or the transaction already lost: the whole transaction goes, below. Otherwise
        // only this member's writes go.
        if (alone || !sql.inTransaction) throw error;
        sql.exec("ROLLBACK TO member");
        sql.exec("RELEASE member");
        settled.push({ member, ok: false, value: error });
      }
    }
    // Lost meanwhile (a member swallowed the error that rolled it back), the steps would write
    // outside any transaction: COMMIT would fail after them, their writes stored all the same.
    if (!sql.inTransaction) throw new Error("the group's transaction was rolled back by SQLite before its commit steps ran");
    await steps.run(sqliteTx);
    sql.exec("COMMIT");
  } catch (error) {
    // Whatever failed (opening the database, a statement, COMMIT, even the ROLLBACK itself),
    // every member is answered: none of their writes is stored.
    try {
      if (sql?.inTransaction) sql.exec("ROLLBACK");
    } catch {
      // The connection is unusable; nothing more to undo on it.
    }
    for (const member of group.members) member.reject(error);
    return;
  }
  for (const { member, ok, value } of settled) {
    if (ok) member.resolve(value);
    else member.reject(value);
  }
}

/** How long members of a group run in one turn of the event loop before the next waits for another turn. */
const TURN_BUDGET_MS = 4;

function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
