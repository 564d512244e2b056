/**
 * The relay's outbox: an ordered, durable queue of wrapped lines that must reach the server.
 *
 * Every line is appended to a journal file before `push` returns, so a line the relay has taken
 * survives the relay being killed (even with SIGKILL); the byte offset of the first undelivered
 * line is kept beside it and moved forward only after the server answered a batch. A relay that
 * starts later adopts the journals of relays that died in the same directory (see
 * `adoptOrphans`) and sends what they had not delivered first. A re-sent line is byte-identical,
 * so the server counts it as a duplicate: exactly once. The head of the queue is cached in memory
 * up to `memoryLimitBytes`; the rest is read back from the journal in order as memory drains, so a
 * long outage costs disk, not RAM. Lines never contain "\n" (they are single-line JSON).
 *
 * The directory is private: created 0700 (an existing one must be a real directory owned by this
 * user with no group or other access), files are created 0600 and exclusively, and no symlink is
 * ever followed, so another local user can neither read the events nor redirect the writes.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface SpoolOptions {
  dir: string;
  /** File name stem, e.g. the format ("codex" → codex-<pid>-<n>.spool.ndjson). */
  name: string;
  memoryLimitBytes?: number;
  /** Bytes read back from disk at a time. */
  readChunkBytes?: number;
}

export class SpoolDirectoryError extends Error {}

const JOURNAL = ".spool.ndjson";
const OFFSET = ".offset";
const NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
let instances = 0;

/** Where spools live by default: per user, private, stable across runs (so a killed relay's journal is found again). */
export function defaultSpoolDir(env: Record<string, string | undefined> = process.env): string {
  const state = env.XDG_STATE_HOME || path.join(os.homedir(), ".local", "state");
  return path.join(state, "retry-radar", "relay");
}

/** Creates the directory 0700, or checks an existing one is private; refuses symlinks and foreign owners. */
export function ensurePrivateDir(dir: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(dir);
  } catch {
    fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o700 });
    try {
      fs.mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    stat = fs.lstatSync(dir);
  }
  if (stat.isSymbolicLink()) throw new SpoolDirectoryError(`spool directory ${dir} is a symbolic link; give a real directory (--spool DIR)`);
  if (!stat.isDirectory()) throw new SpoolDirectoryError(`spool directory ${dir} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) throw new SpoolDirectoryError(`spool directory ${dir} belongs to another user (uid ${stat.uid})`);
  if ((stat.mode & 0o077) !== 0) {
    throw new SpoolDirectoryError(`spool directory ${dir} is readable or writable by others (mode ${(stat.mode & 0o777).toString(8)}); chmod 700 it or give another (--spool DIR)`);
  }
}

/** Opens a file that must not exist yet (0600, never through a symlink). */
function createExclusive(file: string, flags = 0): number {
  return fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_RDWR | NOFOLLOW | flags, 0o600);
}

export class Spool {
  readonly dir: string;
  readonly file: string;
  private readonly offsetFile: string;
  private readonly memoryLimit: number;
  private readonly readChunk: number;
  private mem: string[] = [];
  private memBytes = 0;
  private fd: number | null = null;
  /** Journal size: where the next line is written. */
  private writeOffset = 0;
  /** Where the lines not yet cached in memory start. */
  private readOffset = 0;
  /** Where the first undelivered line starts (persisted in the offset file). */
  private committedOffset = 0;
  private diskLines = 0;
  /** Largest number of lines ever kept only on disk (for reporting). */
  spilledTotal = 0;

  constructor(options: SpoolOptions) {
    this.dir = options.dir;
    ensurePrivateDir(this.dir);
    const stem = `${options.name}-${process.pid}-${instances++}`;
    this.file = path.join(options.dir, `${stem}${JOURNAL}`);
    this.offsetFile = path.join(options.dir, `${stem}${OFFSET}`);
    this.memoryLimit = options.memoryLimitBytes ?? 8 * 1024 * 1024;
    this.readChunk = Math.max(1024, options.readChunkBytes ?? 1024 * 1024);
  }

  get length(): number {
    return this.mem.length + this.diskLines;
  }

  /** Lines kept only in the journal, not yet read back into memory. */
  get onDisk(): number {
    return this.diskLines;
  }

  push(line: string): void {
    if (line.includes("\n")) throw new Error("spool lines must be single-line");
    const data = Buffer.from(`${line}\n`, "utf8");
    const fd = this.journal();
    fs.writeSync(fd, data, 0, data.length, this.writeOffset);
    this.writeOffset += data.length;
    if (this.diskLines > 0 || this.memBytes + data.length > this.memoryLimit) {
      this.diskLines += 1;
      this.spilledTotal += 1;
      return;
    }
    this.mem.push(line);
    this.memBytes += data.length;
    this.readOffset = this.writeOffset;
  }

  /** Up to `maxLines` lines (and about `maxBytes`, at least one line) from the head, not removed. */
  peek(maxLines: number, maxBytes = Infinity): string[] {
    // Refill from disk when memory runs low (not on every peek: a full memory stays full).
    if (this.diskLines > 0 && this.mem.length < maxLines && (this.mem.length === 0 || this.memBytes < this.memoryLimit / 2)) this.refill();
    const out: string[] = [];
    let bytes = 0;
    for (const line of this.mem) {
      if (out.length >= maxLines) break;
      const size = Buffer.byteLength(line) + 1;
      if (out.length > 0 && bytes + size > maxBytes) break;
      out.push(line);
      bytes += size;
    }
    return out;
  }

  /** Removes the first `count` lines (after they were delivered) and records that durably. */
  drop(count: number): void {
    const removed = this.mem.splice(0, count);
    let bytes = 0;
    for (const line of removed) bytes += Buffer.byteLength(line) + 1;
    this.memBytes -= bytes;
    this.committedOffset += bytes;
    if (this.length === 0 && this.fd !== null) {
      // Everything delivered: start the journal afresh.
      fs.ftruncateSync(this.fd, 0);
      this.writeOffset = this.readOffset = this.committedOffset = 0;
    }
    this.saveOffset();
  }

  /** Every line still queued, in order (memory first, then disk). Does not remove them. */
  all(): string[] {
    const lines = [...this.mem];
    if (this.fd !== null && this.diskLines > 0) lines.push(...readLines(this.fd, this.readOffset, this.writeOffset));
    return lines;
  }

  /**
   * Writes every undelivered line to `undelivered-<name>-<time>.ndjson` in the spool dir and
   * returns its path (null when nothing is left). The file can be replayed with
   * `retry-radar relay pipe --format <format> < file` (wrapped lines are sent as they are).
   */
  dumpUndelivered(name: string): string | null {
    const lines = this.all();
    if (lines.length === 0) return null;
    const file = path.join(this.dir, `undelivered-${name}-${new Date().toISOString().replace(/[:.]/g, "-")}.ndjson`);
    const fd = createExclusive(file);
    try {
      fs.writeSync(fd, lines.join("\n") + "\n");
    } finally {
      fs.closeSync(fd);
    }
    return file;
  }

  /** Closes and removes the journal (only call when it is empty or already dumped). */
  dispose(): void {
    if (this.fd !== null) {
      fs.closeSync(this.fd);
      this.fd = null;
    }
    fs.rmSync(this.file, { force: true });
    fs.rmSync(this.offsetFile, { force: true });
  }

  private journal(): number {
    if (this.fd === null) {
      this.fd = createExclusive(this.file);
      this.writeOffset = this.readOffset = this.committedOffset = 0;
      this.saveOffset();
    }
    return this.fd;
  }

  /** Written to a fresh file and renamed over the old one, so a kill never leaves half an offset. */
  private saveOffset(): void {
    if (this.fd === null) return;
    const temp = `${this.offsetFile}.${process.pid}.tmp`;
    fs.rmSync(temp, { force: true });
    const fd = createExclusive(temp);
    try {
      fs.writeSync(fd, String(this.committedOffset));
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, this.offsetFile);
  }

  private refill(): void {
    if (this.fd === null || this.diskLines === 0) return;
    // Read back no more than memory has room for (but always at least one line).
    const budget = Math.max(0, this.memoryLimit - this.memBytes);
    let want = Math.min(this.readChunk, Math.max(budget, 4096));
    for (;;) {
      const available = this.writeOffset - this.readOffset;
      const size = Math.min(want, available);
      const buffer = Buffer.alloc(size);
      const read = fs.readSync(this.fd, buffer, 0, size, this.readOffset);
      let consumed = 0;
      let taken = 0;
      while (consumed < read) {
        const end = buffer.indexOf(0x0a, consumed);
        if (end < 0 || end >= read) break;
        const lineBytes = end + 1 - consumed;
        if (taken > 0 && this.memBytes + lineBytes > this.memoryLimit) break;
        this.mem.push(buffer.subarray(consumed, end).toString("utf8"));
        this.memBytes += lineBytes;
        consumed = end + 1;
        taken += 1;
      }
      if (taken === 0) {
        if (size >= available) throw new Error(`spool file ${this.file} is corrupt (no line end)`);
        want *= 2; // one line longer than what we read
        continue;
      }
      this.diskLines -= taken;
      this.readOffset += consumed;
      break;
    }
  }
}

/** Complete lines between two offsets of a journal (a torn last line, cut by a kill mid-write, is left out). */
function readLines(fd: number, from: number, to: number): string[] {
  if (to <= from) return [];
  const buffer = Buffer.alloc(to - from);
  const read = fs.readSync(fd, buffer, 0, buffer.length, from);
  const text = buffer.subarray(0, read).toString("utf8");
  const end = text.lastIndexOf("\n");
  return end < 0 ? [] : text.slice(0, end).split("\n").filter((line) => line.length > 0);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export interface AdoptedJournal {
  file: string;
  lines: string[];
}

/**
 * The undelivered lines of relays that died with this spool directory and `name`: journals
 * whose process is gone. Each is read from its committed offset; `release()` removes it once
 * its lines are safely in the adopting spool (until then a crash just adopts it again).
 */
export function adoptOrphans(dir: string, name: string): (AdoptedJournal & { release(): void })[] {
  ensurePrivateDir(dir);
  const pattern = new RegExp(`^${name.replace(/[^a-z0-9-]/gi, "")}-(\\d+)-\\d+\\${JOURNAL}$`);
  const adopted: (AdoptedJournal & { release(): void })[] = [];
  for (const entry of fs.readdirSync(dir).sort()) {
    const match = pattern.exec(entry);
    if (!match || Number(match[1]) === process.pid || alive(Number(match[1]))) continue;
    const file = path.join(dir, entry);
    const offsetFile = file.slice(0, -JOURNAL.length) + OFFSET;
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | NOFOLLOW);
    } catch {
      continue; // a symlink or gone: never followed
    }
    try {
      const size = fs.fstatSync(fd).size;
      let offset = 0;
      try {
        offset = Math.min(size, Math.max(0, Number(fs.readFileSync(offsetFile, "utf8")) || 0));
      } catch {
        // no offset saved yet: nothing was delivered
      }
      const lines = readLines(fd, offset, size);
      adopted.push({
        file,
        lines,
        release: () => {
          fs.rmSync(file, { force: true });
          fs.rmSync(offsetFile, { force: true });
        },
      });
    } finally {
      fs.closeSync(fd);
    }
  }
  return adopted;
}
