/**
 * The relay's outbox: an ordered queue of wrapped lines that must reach the server. Kept in
 * memory up to `memoryLimitBytes`; beyond that, new lines are appended to a file on disk (and
 * read back in order as memory drains), so a long outage costs disk, not RAM, and nothing is
 * dropped. Lines never contain "\n" (they are single-line JSON).
 */
import fs from "node:fs";
import path from "node:path";

export interface SpoolOptions {
  dir: string;
  /** File name stem, e.g. the format ("codex" → codex.spool.ndjson). */
  name: string;
  memoryLimitBytes?: number;
  /** Bytes read back from disk at a time. */
  readChunkBytes?: number;
}

export class Spool {
  readonly dir: string;
  readonly file: string;
  private readonly memoryLimit: number;
  private readonly readChunk: number;
  private mem: string[] = [];
  private memBytes = 0;
  private fd: number | null = null;
  private writeOffset = 0;
  private readOffset = 0;
  private diskLines = 0;
  /** Largest number of lines ever written to disk (for reporting). */
  spilledTotal = 0;

  constructor(options: SpoolOptions) {
    this.dir = options.dir;
    this.file = path.join(options.dir, `${options.name}.spool.ndjson`);
    this.memoryLimit = options.memoryLimitBytes ?? 8 * 1024 * 1024;
    this.readChunk = Math.max(1024, options.readChunkBytes ?? 1024 * 1024);
  }

  get length(): number {
    return this.mem.length + this.diskLines;
  }

  get onDisk(): number {
    return this.diskLines;
  }

  push(line: string): void {
    if (line.includes("\n")) throw new Error("spool lines must be single-line");
    const size = Buffer.byteLength(line) + 1;
    if (this.diskLines > 0 || this.memBytes + size > this.memoryLimit) {
      this.appendToDisk(line);
      return;
    }
    this.mem.push(line);
    this.memBytes += size;
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

  /** Removes the first `count` lines (after they were delivered). */
  drop(count: number): void {
    const removed = this.mem.splice(0, count);
    for (const line of removed) this.memBytes -= Buffer.byteLength(line) + 1;
  }

  /** Every line still queued, in order (memory first, then disk). Does not remove them. */
  all(): string[] {
    const lines = [...this.mem];
    if (this.fd !== null && this.diskLines > 0) {
      const size = this.writeOffset - this.readOffset;
      const buffer = Buffer.alloc(size);
      fs.readSync(this.fd, buffer, 0, size, this.readOffset);
      lines.push(...buffer.toString("utf8").split("\n").filter((l) => l.length > 0));
    }
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
    fs.mkdirSync(this.dir, { recursive: true });
    const file = path.join(this.dir, `undelivered-${name}-${new Date().toISOString().replace(/[:.]/g, "-")}.ndjson`);
    fs.writeFileSync(file, lines.join("\n") + "\n");
    return file;
  }

  /** Closes and removes the disk spool (only call when it is empty or already dumped). */
  dispose(): void {
    if (this.fd !== null) {
      fs.closeSync(this.fd);
      this.fd = null;
      fs.rmSync(this.file, { force: true });
    }
  }

  private appendToDisk(line: string): void {
    if (this.fd === null) {
      fs.mkdirSync(this.dir, { recursive: true });
      this.fd = fs.openSync(this.file, "w+");
      this.writeOffset = 0;
      this.readOffset = 0;
    }
    const data = Buffer.from(`${line}\n`, "utf8");
    fs.writeSync(this.fd, data, 0, data.length, this.writeOffset);
    this.writeOffset += data.length;
    this.diskLines += 1;
    this.spilledTotal += 1;
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
        const line = buffer.subarray(consumed, end).toString("utf8");
        this.mem.push(line);
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
    if (this.diskLines === 0) {
      // Everything is back in memory: start the file afresh.
      fs.ftruncateSync(this.fd, 0);
      this.writeOffset = 0;
      this.readOffset = 0;
    }
  }
}
