import fs from "node:fs";
import path from "node:path";

/**
 * Waits until the file's pages are on disk. A bench writes its databases (hundreds of MB at 1M
 * events) just before it measures: left to the kernel, their writeback starts about 30 s later,
 * inside the measured windows, and the server's own fsyncs (SQLite syncs the WAL's header each
 * time a commit starts the WAL over) queue behind it, up to 393 ms on the ingest thread in a
 * traced run of scripts/bench-reads.ts. Measured windows then see the server's I/O, not the
 * bench's.
 */
export function syncToDisk(file: string): void {
  const fd = fs.openSync(file, "r+");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** A copy of the database file `source` as `<dir>/radar.db`, on disk before this returns (syncToDisk); its path. */
export function copyDatabaseInto(dir: string, source: string): string {
  const copy = path.join(dir, "radar.db");
  fs.copyFileSync(source, copy);
  syncToDisk(copy);
  return copy;
}
