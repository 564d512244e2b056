import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Database from "better-sqlite3";
import type { LineFormat, NormalizedEvent, NormalizedLine } from "@/lib/ingest/types";

/**
 * What the in-process suites (the pipeline and its neighbours, on a real SQLite file) share.
 * Nothing here opens the database: a suite points DATABASE_URL at its own file first, then
 * imports the modules that open it.
 */
export function useFreshDatabase(name: string): void {
  process.env.DATABASE_URL = `file:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), `radar-${name}-`)), "radar.db")}`;
}

let keySeq = 0;

/** Lines as an adapter hands them to the pipeline: each event over `base`, with an idempotency key of its own. */
export function normalizedLines(
  events: Partial<NormalizedEvent>[],
  { receivedAt, base, format = "canonical" }: { receivedAt: number; base: Partial<NormalizedEvent>; format?: LineFormat },
): NormalizedLine[] {
  return events.map((event, index) => ({
    index,
    event: { type: "progress", ...base, ...event } as NormalizedEvent,
    nativeType: null,
    format,
    idempotencyKey: `line-${++keySeq}`,
    raw: event,
    receivedAt,
  }));
}

/** The statements `run` had `connection` exec (BEGIN, COMMIT, SAVEPOINT…), in order, with its value or its error. */
export async function execsDuring<T>(connection: Database.Database, run: () => Promise<T>): Promise<{ executed: string[]; result: PromiseSettledResult<T> }> {
  const exec = connection.exec.bind(connection);
  const executed: string[] = [];
  connection.exec = (text: string) => {
    executed.push(text);
    return exec(text);
  };
  try {
    const [result] = await Promise.allSettled([run()]);
    return { executed, result };
  } finally {
    connection.exec = exec;
  }
}

/** What `run` returned, and how many units of work it began on `connection` (each is one BEGIN IMMEDIATE, committed or rolled back). */
export async function countUnitsOfWork<T>(connection: Database.Database, run: () => Promise<T>): Promise<{ units: number; value: T }> {
  const { executed, result } = await execsDuring(connection, run);
  if (result.status === "rejected") throw result.reason;
  return { units: executed.filter((text) => text === "BEGIN IMMEDIATE").length, value: result.value };
}
