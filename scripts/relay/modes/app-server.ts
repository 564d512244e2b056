/**
 * `relay codex-app-server`: runs `codex app-server` (or --command), speaks its JSON-RPC over
 * stdio, forwards every notification (and every request Codex sends us) to
 * /api/v1/ingest/codex wrapped with its receive time, and carries out directives:
 * interrupt → `turn/interrupt {threadId, turnId}`, continue → `turn/start {threadId, input: []}`,
 * acknowledging each with Codex's answer. With --prompt it starts a thread and a turn and exits
 * once that turn (and any continuation the radar asked for) has ended.
 */
import type { RelayConfig } from "../args";
import { RelayCore, resolveBin } from "../core";
import type { DirectiveAction, DirectiveOutcome } from "../directives";
import { JsonRpcPeer, type IncomingLine, type RpcId, type RpcOutcome } from "../jsonrpc";
import type { Logger } from "../log";
import { agentEnv, describeExit, endProcess, exitCodeOf, exitOf, spawnAgent } from "../process";
import type { RelayIO } from "../io";

const APPROVAL_DECLINES: Record<string, unknown> = {
  "item/commandExecution/requestApproval": { decision: "decline" },
  "item/fileChange/requestApproval": { decision: "decline" },
  applyPatchApproval: { decision: { denied: { rejection: "declined by the Retry Radar relay (no one can approve here)" } } },
  execCommandApproval: { decision: { denied: { rejection: "declined by the Retry Radar relay (no one can approve here)" } } },
};

const RELAY_VERSION = "0.1.0";

export async function runAppServer(config: RelayConfig, io: RelayIO, log: Logger): Promise<number> {
  const currentTurn = new Map<string, string>();
  const completed = new Map<string, string>(); // turn id → final status
  const supervised = new Set<string>();
  let supervisedStatus: string | null = null;
  let finishing = false;
  let resolveDone!: (reason: string) => void;
  const done = new Promise<string>((resolve) => (resolveDone = resolve));

  const args = ["app-server", ...config.agentArgs];
  const bin = resolveBin("codex");
  log.debug(`starting ${config.command ?? `${bin} ${args.join(" ")}`}`);
  const child = spawnAgent(config.command, bin, config.command ? config.agentArgs : args, {
    cwd: config.cwd ?? process.cwd(),
    stdio: ["pipe", "pipe", "pipe"],
    env: agentEnv(),
  });
  child.stderr!.on("data", (chunk) => io.stderr.write(chunk));
  child.stdin!.on("error", () => undefined); // EPIPE when Codex is gone: reported by the exit handler

  const core: RelayCore = new RelayCore(config, log, {
    context: () => ({ currentTurn: (threadId: string) => currentTurn.get(threadId) ?? null }),
    execute: (d, action) => execute(action),
  });

  const peer = new JsonRpcPeer((line) => child.stdin!.write(line), {
    onLine: (line) => onLine(line),
    onInvalid: (text, reason) => log.debug(`codex wrote a line that is not JSON-RPC (${reason}): ${text.slice(0, 200)}`),
    onSent: (text, sentAt) => {
      // Our own turn/interrupt goes on the record too (the radar stores it as interrupt.requested).
      if (text.startsWith('{"method":"turn/interrupt"')) core.forwarder.push(text, sentAt);
    },
  });
  child.stdout!.on("data", (chunk) => peer.onData(chunk));
  child.stdout!.on("end", () => peer.onEnd());

  const exited = exitOf(child).then((exit) => {
    peer.close(`codex exited (${describeExit(exit)})`);
    resolveDone("exit");
    return exit;
  });
  child.on("error", (error) => {
    log.error(`could not start codex: ${error.message}`);
    resolveDone("exit");
  });

  function threadOf(params: any): string | null {
    if (!params || typeof params !== "object") return null;
    if (typeof params.threadId === "string") return params.threadId;
    if (params.thread && typeof params.thread.id === "string") return params.thread.id;
    return null;
  }

  function onLine(line: IncomingLine): void {
    const m = line.message;
    if (m.kind === "notification" || m.kind === "request") {
      core.forwarder.push(line.text, line.receivedAt);
      const params = m.params as any;
      const threadId = threadOf(params);
      if (threadId) core.knownThreads.add(threadId);
      if (m.kind === "notification") {
        if (m.method === "turn/started" && threadId && params?.turn?.id) currentTurn.set(threadId, params.turn.id);
        if (m.method === "turn/completed" && threadId && params?.turn?.id) {
          const turnId: string = params.turn.id;
          const status: string = params.turn.status ?? "unknown";
          if (currentTurn.get(threadId) === turnId) currentTurn.delete(threadId);
          completed.set(turnId, status);
          if (supervised.delete(turnId)) {
            supervisedStatus = status;
            log.info(`turn ${turnId} on thread ${threadId} ended ${status}`);
            maybeFinish();
          }
        }
      } else {
        answerServerRequest(m.id, m.method);
      }
    }
  }

  function answerServerRequest(id: RpcId, method: string): void {
    const decline = APPROVAL_DECLINES[method];
    try {
      if (decline) {
        log.warn(`codex asked for approval (${method}); declining — run with --approval-policy never to avoid approval requests`);
        peer.respond(id, { result: decline });
      } else {
        peer.respond(id, { error: { code: -32601, message: `the Retry Radar relay cannot answer ${method}` } });
      }
    } catch {
      // codex is gone
    }
  }

  function supervise(turnId: string): void {
    const status = completed.get(turnId);
    if (status) {
      supervisedStatus = status;
      maybeFinish();
    } else supervised.add(turnId);
  }

  function maybeFinish(): void {
    if (!config.prompt || config.stay || supervised.size > 0 || finishing) return;
    // Give a directive that is being carried out (e.g. the interrupt that ended the turn) its acknowledgement first.
    resolveDone("turn-ended");
  }

  async function execute(action: DirectiveAction): Promise<DirectiveOutcome | null> {
    if (action.type !== "rpc") return { result: "failed", detail: `cannot ${action.type} in codex-app-server mode` };
    const outcome: RpcOutcome = await peer.request(action.method, action.params, 15_000);
    if (!outcome.ok) return { result: "failed", detail: `Codex answered ${action.method} with error ${outcome.error.code}: ${outcome.error.message}` };
    if (action.method === "turn/start") {
      const turnId = (outcome.result as any)?.turn?.id;
      if (typeof turnId === "string") {
        if (!completed.has(turnId)) currentTurn.set(action.params.threadId, turnId);
        if (config.prompt) supervise(turnId);
        return { result: "acknowledged", detail: `Codex started continuation turn ${turnId}` };
      }
      return { result: "acknowledged", detail: `Codex accepted turn/start: ${JSON.stringify(outcome.result).slice(0, 300)}` };
    }
    return { result: "acknowledged", detail: `Codex accepted turn/interrupt for turn ${action.params.turnId}: ${JSON.stringify(outcome.result)}` };
  }

  core.start();

  // Handshake, then the optional supervised task.
  const init = await peer.request(
    "initialize",
    { clientInfo: { name: "retry_radar_relay", title: "Retry Radar relay", version: RELAY_VERSION }, capabilities: { experimentalApi: false } },
    60_000,
  );
  let failedToStart = false;
  if (!init.ok) {
    log.error(`codex app-server did not initialize: ${init.error.message}`);
    failedToStart = true;
  } else {
    peer.notify("initialized");
    if (config.prompt) {
      const threadParams: Record<string, unknown> = { cwd: config.cwd ?? process.cwd(), approvalPolicy: config.approvalPolicy };
      if (config.sandbox) threadParams.sandbox = config.sandbox;
      if (config.model) threadParams.model = config.model;
      const thread = await peer.request("thread/start", threadParams, 60_000);
      const threadId = thread.ok ? (thread.result as any)?.thread?.id : null;
      if (!thread.ok || typeof threadId !== "string") {
        log.error(`thread/start failed: ${thread.ok ? JSON.stringify(thread.result) : thread.error.message}`);
        failedToStart = true;
      } else {
        core.knownThreads.add(threadId);
        const turn = await peer.request("turn/start", { threadId, input: [{ type: "text", text: config.prompt, text_elements: [] }] }, 60_000);
        const turnId = turn.ok ? (turn.result as any)?.turn?.id : null;
        if (!turn.ok || typeof turnId !== "string") {
          log.error(`turn/start failed: ${turn.ok ? JSON.stringify(turn.result) : turn.error.message}`);
          failedToStart = true;
        } else {
          log.info(`supervising Codex thread ${threadId}, turn ${turnId}`);
          if (!currentTurn.has(threadId) && !completed.has(turnId)) currentTurn.set(threadId, turnId);
          supervise(turnId);
        }
      }
    } else {
      log.info("attached to codex app-server; forwarding until it exits (Ctrl-C to stop)");
    }
  }
  if (failedToStart) resolveDone("failed-to-start");

  const stopSignal = io.onSignal((signal) => {
    log.info(`${signal}: stopping codex and flushing`);
    resolveDone("signal");
  });

  const reason = await done;
  finishing = true;
  stopSignal();
  if (reason === "turn-ended") {
    // Let in-flight directives finish and be acknowledged before Codex goes away.
    await Promise.race([core.runner.idle(), new Promise((r) => setTimeout(r, config.flushTimeoutMs))]);
  }
  let exit = child.exitCode !== null || child.signalCode !== null ? await exited : null;
  if (!exit) {
    const ended = await endProcess(child, Math.min(config.killGraceMs, 3_000), "close-stdin");
    exit = ended;
    log.debug(`codex app-server ended after ${ended.after} (${describeExit(ended)})`);
  } else if (reason === "exit") {
    log.info(`codex app-server exited (${describeExit(exit)})`);
  }
  const report = await core.shutdown();
  if (report.undelivered) return 75; // EX_TEMPFAIL: events are in the undelivered file
  if (reason === "signal") return 130;
  if (reason === "failed-to-start") return 1;
  if (reason === "exit") return exitCodeOf(exit) || (config.prompt && supervised.size ? 1 : 0);
  return supervisedStatus === "failed" ? 1 : 0;
}
