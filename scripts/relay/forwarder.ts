/**
 * Batches native lines to the radar server without ever blocking the agent: `push` only
 * appends to the spool (memory, then disk); a background loop sends NDJSON batches (every
 * `flushIntervalMs` or as soon as `maxBatchLines` are queued) and, when the server is
 * unreachable or busy, keeps everything and retries with backoff that honours `Retry-After`,
 * telling the operator on stderr. A batch is removed only after the server answered it, and a
 * retried batch is byte-identical, so the server counts a re-send as duplicates: exactly once.
 * Lines are journaled on disk as they are pushed (see Spool), so what a killed relay held is sent
 * by the next relay started on the same spool directory. A batch the server keeps failing with the
 * same server error is split down to the line at fault, which is quarantined to a file with a
 * loud message, so one poisonous line never holds back the events behind it; 429/503 and network
 * failures (and 502/504 from a proxy) are waited out, never quarantined.
 */
import fs from "node:fs";
import path from "node:path";
import { DEFAULT_BACKOFF, nextRetry, type BackoffOptions } from "./backoff";
import type { Directive, IngestResponse, RadarClient } from "./client";
import type { NativeFormat } from "../../lib/ingest/types";
import { ENDPOINTS, followThread, wrapLine } from "./lines";
import { formatDuration, type Logger } from "./log";
import { adoptOrphans, Spool } from "./spool";

/** Identical server errors on the same batch before it is split (and, at one line, quarantined). */
export const QUARANTINE_AFTER = 3;

export interface ForwarderOptions {
  client: RadarClient;
  format: NativeFormat;
  spoolDir: string;
  log: Logger;
  flushIntervalMs?: number;
  maxBatchLines?: number;
  maxBatchBytes?: number;
  memoryLimitBytes?: number;
  backoff?: BackoffOptions;
  random?: () => number;
  /** Directives listed in ingest responses. */
  onDirectives?: (directives: Directive[]) => void;
  /** Called after each delivered batch (tests, stats). */
  onDelivered?: (lines: string[], response: IngestResponse) => void;
}

export interface ForwarderStats {
  queued: number;
  delivered: number;
  accepted: number;
  duplicates: number;
  rejected: number;
  batches: number;
  failures: number;
}

export interface CloseReport {
  delivered: number;
  undelivered: number;
  /** Where the undelivered lines were written (null when everything arrived). */
  undeliveredFile: string | null;
}

export class Forwarder {
  readonly spool: Spool;
  readonly stats: ForwarderStats = { queued: 0, delivered: 0, accepted: 0, duplicates: 0, rejected: 0, batches: 0, failures: 0 };
  private readonly o: Required<Omit<ForwarderOptions, "onDirectives" | "onDelivered">> & Pick<ForwarderOptions, "onDirectives" | "onDelivered">;
  private timer: NodeJS.Timeout | null = null;
  private wake: (() => void) | null = null;
  private sleeping: { timer: NodeJS.Timeout; resolve: () => void } | null = null;
  private running = false;
  private loop: Promise<void> | null = null;
  private closing = false;
  private consecutiveFailures = 0;
  private failingSince: number | null = null;
  /** The stream's thread after every delivered line (sent as ?threadId= so a batch never depends on server memory). */
  private committedThread: string | null = null;
  private drainedWaiters: (() => void)[] = [];
  private rejectedFile: string | null = null;
  private quarantineFile: string | null = null;
  /** Journals are per format and destination: a dead relay's lines resume only towards the same radar and source. */
  private readonly journalName: string;
  /** The same server error for the same head of the queue, this many times in a row. */
  private repeated: { head: string; status: number; count: number } | null = null;

  constructor(options: ForwarderOptions) {
    this.o = {
      flushIntervalMs: 200,
      maxBatchLines: 100,
      maxBatchBytes: 1024 * 1024,
      memoryLimitBytes: 8 * 1024 * 1024,
      backoff: DEFAULT_BACKOFF,
      random: Math.random,
      ...options,
    };
    this.journalName = `${options.format}-${options.client.destination}`;
    this.spool = new Spool({ dir: options.spoolDir, name: this.journalName, memoryLimitBytes: this.o.memoryLimitBytes });
    this.resumeOrphans();
  }

  /** Takes over what relays that died on this spool directory (same format, server and token) had not delivered; it goes first. */
  private resumeOrphans(): void {
    for (const orphan of adoptOrphans(this.o.spoolDir, this.journalName)) {
      for (const line of orphan.lines) this.spool.push(line);
      this.stats.queued += orphan.lines.length;
      orphan.release();
      if (orphan.lines.length) {
        this.o.log.warn(`resuming ${orphan.lines.length} event(s) a relay that stopped without delivering them left in ${orphan.file}`);
      }
    }
  }

  get pending(): number {
    return this.spool.length;
  }

  /** Queues a native line (its JSON text) with its receive time. Never blocks, never throws on I/O trouble of the server. */
  push(text: string, receivedAt: number = Date.now()): void {
    this.pushWrapped(wrapLine(text, receivedAt));
  }

  /** Queues an already wrapped line as it is (replaying a spool file keeps the original bytes). */
  pushWrapped(line: string): void {
    this.spool.push(line);
    this.stats.queued += 1;
    if (this.spool.length >= this.o.maxBatchLines) this.kick();
    else if (!this.timer) this.timer = setTimeout(() => this.kick(), this.o.flushIntervalMs);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Sends what is queued now (skipping the batching delay) and resolves when the queue is empty or after `timeoutMs`. */
  async flush(timeoutMs: number): Promise<boolean> {
    if (this.spool.length === 0) return true;
    this.kick();
    this.cutSleep();
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.drainedWaiters = this.drainedWaiters.filter((w) => w !== done);
        resolve(this.spool.length === 0);
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.drainedWaiters.push(done);
    });
  }

  /**
   * Final flush (bounded by `timeoutMs`), then stops. Whatever could not be delivered is written
   * to a file in the spool dir and reported on stderr — never dropped silently.
   */
  async close(timeoutMs: number): Promise<CloseReport> {
    this.closing = true;
    const drained = await this.flush(timeoutMs);
    this.running = false;
    this.kick();
    this.cutSleep();
    if (this.timer) clearTimeout(this.timer);
    await Promise.race([this.loop, new Promise((r) => setTimeout(r, 2_000))]);
    let undeliveredFile: string | null = null;
    const undelivered = this.spool.length;
    if (!drained && undelivered > 0) {
      undeliveredFile = this.spool.dumpUndelivered(this.o.format);
      this.o.log.error(
        `could not deliver ${undelivered} event(s) to ${this.o.client.server} before exiting; they are saved in ${undeliveredFile} ` +
          `(replay: retry-radar relay pipe --format ${this.o.format} < ${undeliveredFile})`,
      );
    }
    this.spool.dispose();
    return { delivered: this.stats.delivered, undelivered, undeliveredFile };
  }

  private kick(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private cutSleep(): void {
    if (this.sleeping) {
      clearTimeout(this.sleeping.timer);
      const { resolve } = this.sleeping;
      this.sleeping = null;
      resolve();
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.sleeping = {
        timer: setTimeout(() => {
          this.sleeping = null;
          resolve();
        }, ms),
        resolve,
      };
    });
  }

  private async run(): Promise<void> {
    while (this.running) {
      if (this.spool.length === 0) {
        for (const w of this.drainedWaiters.splice(0)) w();
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      const batch = this.spool.peek(this.o.maxBatchLines, this.o.maxBatchBytes);
      const outcome = await this.o.client.postLines(ENDPOINTS[this.o.format], batch, {
        threadId: this.o.format === "codex" ? null : this.committedThread,
      });
      if (outcome.ok) {
        this.delivered(batch, outcome.body);
        continue;
      }
      if (!outcome.retryable) {
        if (outcome.status === 413 && batch.length > 1) {
          // Too large: halve the batch size for a while.
          this.o.maxBatchLines = Math.max(1, Math.floor(batch.length / 2));
          this.o.log.warn(`radar refused a batch of ${batch.length} lines as too large; sending ${this.o.maxBatchLines} at a time`);
          continue;
        }
        // The server will never take these bytes: keep them in a file, say so, move on.
        const file = this.saveRejected(batch);
        this.o.log.error(`radar refused ${batch.length} line(s) for good (${outcome.message}); they are saved in ${file}`);
        this.committedThread = followThread(this.o.format, batch, this.committedThread);
        this.spool.drop(batch.length);
        this.stats.rejected += batch.length;
        continue;
      }
      if (this.poisoned(batch, outcome.status)) continue;
      this.consecutiveFailures += 1;
      this.stats.failures += 1;
      this.failingSince ??= Date.now();
      const decision = nextRetry(
        { failures: this.consecutiveFailures, status: outcome.status, retryAfter: outcome.retryAfter },
        this.o.backoff,
        this.o.random,
      );
      const what = outcome.status === 429 || outcome.status === 503 ? `radar busy (${outcome.message})` : `radar unreachable (${outcome.message})`;
      const wait = this.closing ? Math.min(decision.delayMs, 1_000) : decision.delayMs;
      const advice = decision.source === "retry-after" ? ` as the server asked${decision.capped ? " (capped)" : ""}` : "";
      const onDisk = this.spool.onDisk ? ` (${this.spool.onDisk} on disk in ${this.spool.file})` : "";
      this.o.log.warn(`${what}, ${this.spool.length} events buffered${onDisk}, retrying in ${formatDuration(wait)}${advice}`);
      await this.sleep(wait);
    }
  }

  /**
   * The same 500 for the same head of the queue QUARANTINE_AFTER times in a row: the server
   * fails on something in this batch (502/503/504 and 429 say it is down or busy, not this batch). Halve the batch until one line is left, then
   * quarantine that line to a file and go on. True when it acted (retry at once, no backoff).
   */
  private poisoned(batch: string[], status: number | null): boolean {
    if (status !== 500) {
      this.repeated = null;
      return false;
    }
    const head = batch[0];
    this.repeated = this.repeated && this.repeated.head === head && this.repeated.status === status ? { ...this.repeated, count: this.repeated.count + 1 } : { head, status, count: 1 };
    if (this.repeated.count < QUARANTINE_AFTER) return false;
    this.repeated = null;
    if (batch.length > 1) {
      this.o.maxBatchLines = Math.max(1, Math.floor(batch.length / 2));
      this.o.log.warn(`radar failed ${QUARANTINE_AFTER} times with ${status} on the same batch; sending ${this.o.maxBatchLines} line(s) at a time to find the line at fault`);
      return true;
    }
    const file = this.quarantine(batch);
    this.o.log.error(`QUARANTINED 1 line the radar failed on ${QUARANTINE_AFTER} times in a row with ${status}; it is saved in ${file} (later events go on)`);
    this.committedThread = followThread(this.o.format, batch, this.committedThread);
    this.spool.drop(1);
    this.stats.rejected += 1;
    this.consecutiveFailures = 0;
    this.failingSince = null;
    return true;
  }

  private quarantine(lines: string[]): string {
    this.quarantineFile ??= path.join(this.spool.dir, `quarantine-${this.o.format}.ndjson`);
    return this.appendTo(this.quarantineFile, lines, "quarantined");
  }

  private delivered(batch: string[], body: IngestResponse): void {
    this.spool.drop(batch.length);
    this.committedThread = followThread(this.o.format, batch, this.committedThread);
    this.stats.delivered += batch.length;
    this.stats.accepted += body.accepted;
    this.stats.duplicates += body.duplicates;
    this.stats.batches += 1;
    if (this.consecutiveFailures > 0) {
      const outage = this.failingSince ? ` after ${formatDuration(Date.now() - this.failingSince)}` : "";
      this.o.log.info(`radar reachable again${outage}; delivering ${this.spool.length + batch.length} buffered events`);
      this.consecutiveFailures = 0;
      this.failingSince = null;
    }
    if (body.rejected.length) {
      this.stats.rejected += body.rejected.length;
      const bad = body.rejected.map((r) => batch[r.index]).filter((l): l is string => typeof l === "string");
      const file = this.saveRejected(bad);
      for (const r of body.rejected.slice(0, 5)) this.o.log.warn(`radar rejected a line: ${r.error}`);
      if (body.rejected.length > 5) this.o.log.warn(`… and ${body.rejected.length - 5} more`);
      this.o.log.warn(`rejected lines are saved in ${file}`);
    }
    this.o.onDelivered?.(batch, body);
    if (body.directives.length) this.o.onDirectives?.(body.directives);
  }

  private saveRejected(lines: string[]): string {
    this.rejectedFile ??= path.join(this.spool.dir, `rejected-${this.o.format}.ndjson`);
    return this.appendTo(this.rejectedFile, lines, "rejected");
  }

  /** Appends to a file of the private spool directory: created 0600, never through a symlink. */
  private appendTo(file: string, lines: string[], what: string): string {
    try {
      const fd = fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_APPEND | fs.constants.O_WRONLY | (fs.constants.O_NOFOLLOW ?? 0), 0o600);
      try {
        fs.writeSync(fd, lines.join("\n") + "\n");
      } finally {
        fs.closeSync(fd);
      }
    } catch (error) {
      this.o.log.error(`could not save ${what} lines: ${(error as Error).message}`);
    }
    return file;
  }
}
