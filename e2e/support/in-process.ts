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

/** What `run` returned, and how many units of work it began on `connection` (each is one BEGIN IMMEDIATE, committed or rolled back). */
export async function countUnitsOfWork<T>(connection: Database.Database, run: () => Promise<T>): Promise<{ units: number; value: T }> {
  const exec = connection.exec.bind(connection);
  let units = 0;
  connection.exec = (text: string) => {
    if (text === "BEGIN IMMEDIATE") units++;
    return exec(text);
  };
  try {
    const value = await run();
    return { units, value };
  } finally {
    connection.exec = exec;
  }
}
