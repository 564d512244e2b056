/** What every relay mode shares: the radar client, the forwarder and the directive runner. */
import fs from "node:fs";
import path from "node:path";
import type { RelayConfig } from "./args";
import { RadarClient, type Directive } from "./client";
import { DirectiveRunner, planDirective, relayCapabilities, type DirectiveAction, type DirectiveContext, type DirectiveOutcome } from "./directives";
import { Forwarder, type CloseReport } from "./forwarder";
import { isWrapped, parseObjectLine, threadOfLine, unwrapValue } from "./lines";
import type { Logger } from "./log";

export interface CoreHooks {
  /** The mode's view of its agent, for planning directives. */
  context: () => Omit<DirectiveContext, "mode" | "knownThreads" | "pipeDirectives">;
  execute: (d: Directive, action: DirectiveAction) => Promise<DirectiveOutcome | null>;
}

export class RelayCore {
  readonly client: RadarClient;
  readonly forwarder: Forwarder;
  readonly runner: DirectiveRunner;
  readonly knownThreads = new Set<string>();

  constructor(
    readonly config: RelayConfig,
    readonly log: Logger,
    hooks: CoreHooks,
    fetchImpl: typeof fetch = fetch,
  ) {
    this.client = new RadarClient(config.server, config.token, fetchImpl);
    this.forwarder = new Forwarder({
      client: this.client,
      format: config.format,
      spoolDir: config.spoolDir,
      log,
      flushIntervalMs: config.flushIntervalMs,
      maxBatchLines: config.batchLines,
      memoryLimitBytes: config.memoryLimitBytes,
      onDirectives: (list) => this.runner.offer(list),
    });
    this.runner = new DirectiveRunner({
      client: this.client,
      log,
      pollWaitSeconds: config.pollWaitSeconds,
      capabilities: relayCapabilities(config.mode),
      plan: (d) =>
        planDirective(d, {
          ...hooks.context(),
          mode: config.mode,
          knownThreads: this.knownThreads,
          pipeDirectives: config.pipeDirectives,
        }),
      execute: hooks.execute,
      // The agent's own account of what happened (e.g. turn/completed interrupted) goes first.
      beforeAck: async () => {
        await this.forwarder.flush(2_000);
      },
    });
  }

  /**
   * One line of agent output: learns the thread it names and queues it for the radar (a line
   * already wrapped as {at, message} keeps its time). Returns why a line was not forwarded.
   */
  forwardLine(line: string, receivedAt: number): { forwarded: true } | { forwarded: false; reason: string } {
    const parsed = parseObjectLine(line);
    if (!parsed.ok) return { forwarded: false, reason: parsed.reason };
    const thread = threadOfLine(this.config.format, unwrapValue(parsed.value));
    if (thread) this.knownThreads.add(thread);
    if (isWrapped(parsed.value)) this.forwarder.pushWrapped(parsed.text);
    else this.forwarder.push(parsed.text, receivedAt);
    return { forwarded: true };
  }

  /** Lines of agent output not forwarded (not JSON objects), counted for the exit summary. */
  skipped = 0;

  /**
   * A line from the agent's stream: forwarded, or counted and passed to `onSkip` (blank lines are
   * neither). The modes differ only in how loudly they report a skipped line.
   */
  takeLine(line: string, receivedAt: number, onSkip: (reason: string, skipped: number) => void): void {
    const result = this.forwardLine(line, receivedAt);
    if (result.forwarded || result.reason === "blank") return;
    this.skipped += 1;
    onSkip(result.reason, this.skipped);
  }

  start(): void {
    this.forwarder.start();
    if (!(this.config.mode === "pipe" && this.config.pipeDirectives === "none")) this.runner.startPolling();
    this.log.debug(`forwarding ${this.config.format} lines to ${this.config.server}; spool ${this.config.spoolDir}`);
  }

  /** Ends directive work (bounded), flushes (bounded), reports. */
  async shutdown(): Promise<CloseReport> {
    const budget = this.config.flushTimeoutMs;
    await Promise.race([this.runner.idle(), new Promise((r) => setTimeout(r, budget))]);
    await this.runner.stop(1_000);
    const report = await this.forwarder.close(budget);
    const s = this.forwarder.stats;
    this.log.info(
      `forwarded ${s.delivered} line(s) to ${this.config.server} (${s.accepted} accepted, ${s.duplicates} duplicates` +
        `${s.rejected ? `, ${s.rejected} rejected` : ""})${report.undelivered ? `; ${report.undelivered} NOT delivered` : ""}`,
    );
    try {
      // Remove the spool dir when it holds nothing worth keeping.
      if (fs.existsSync(this.config.spoolDir) && fs.readdirSync(this.config.spoolDir).length === 0) fs.rmdirSync(this.config.spoolDir);
    } catch {
      // not ours to worry about
    }
    return report;
  }
}

/** Project root (for node_modules/.bin). */
export const PROJECT_ROOT = path.resolve(import.meta.dirname, "..", "..");

/** An agent binary: the project's node_modules/.bin, the working directory's, then PATH. */
export function resolveBin(name: string): string {
  for (const dir of [path.join(PROJECT_ROOT, "node_modules", ".bin"), path.join(process.cwd(), "node_modules", ".bin")]) {
    const candidate = path.join(dir, name);
    if (fs.existsSync(candidate)) return candidate;
  }
  return name;
}
