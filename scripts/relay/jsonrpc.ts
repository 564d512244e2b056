/**
 * JSON-RPC as `codex app-server` speaks it: one JSON object per line, no "jsonrpc" field.
 * - request:      {"method", "id", "params"}  (either side may send one)
 * - response:     {"id", "result"} | {"id", "error": {"code", "message", "data"}}
 * - notification: {"method", "params"}        (no id)
 */
import { LineSplitter, parseObjectLine } from "./lines";

export type RpcId = number | string;

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

export type RpcMessage =
  | { kind: "request"; id: RpcId; method: string; params: unknown }
  | { kind: "notification"; method: string; params: unknown }
  | { kind: "response"; id: RpcId; result: unknown; error: null }
  | { kind: "response"; id: RpcId; result: null; error: RpcError }
  | { kind: "invalid"; reason: string };

export function classifyMessage(value: unknown): RpcMessage {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { kind: "invalid", reason: "not an object" };
  const msg = value as Record<string, unknown>;
  const hasId = typeof msg.id === "number" || typeof msg.id === "string";
  if (typeof msg.method === "string") {
    if (hasId) return { kind: "request", id: msg.id as RpcId, method: msg.method, params: msg.params };
    return { kind: "notification", method: msg.method, params: msg.params };
  }
  if (hasId && "error" in msg && msg.error !== null && msg.error !== undefined) {
    const e = msg.error as Record<string, unknown>;
    return {
      kind: "response",
      id: msg.id as RpcId,
      result: null,
      error: {
        code: typeof e.code === "number" ? e.code : -32000,
        message: typeof e.message === "string" ? e.message : JSON.stringify(e),
        data: e.data,
      },
    };
  }
  if (hasId && "result" in msg) return { kind: "response", id: msg.id as RpcId, result: msg.result, error: null };
  return { kind: "invalid", reason: "neither request, notification nor response" };
}

export function encodeRequest(id: RpcId, method: string, params?: unknown): string {
  return JSON.stringify(params === undefined ? { method, id } : { method, id, params });
}

export function encodeNotification(method: string, params?: unknown): string {
  return JSON.stringify(params === undefined ? { method } : { method, params });
}

export function encodeResponse(id: RpcId, outcome: { result: unknown } | { error: RpcError }): string {
  return JSON.stringify("error" in outcome ? { id, error: outcome.error } : { id, result: outcome.result });
}

export type RpcOutcome = { ok: true; result: unknown } | { ok: false; error: RpcError };

export interface IncomingLine {
  /** The line as received (trimmed). */
  text: string;
  value: Record<string, unknown>;
  message: RpcMessage;
  receivedAt: number;
}

/**
 * One side of a JSON-RPC connection over a line stream. `write` sends a line; feed `onData`
 * with the peer's stdout chunks. Every parsed incoming line goes to `onLine` (responses to our
 * own requests are also resolved here).
 */
export class JsonRpcPeer {
  private nextId = 1;
  private pending = new Map<RpcId, { resolve: (o: RpcOutcome) => void; timer: NodeJS.Timeout | null; method: string }>();
  private splitter = new LineSplitter();
  closed = false;

  constructor(
    private readonly write: (line: string) => void,
    private readonly handlers: {
      onLine?: (line: IncomingLine) => void;
      onInvalid?: (text: string, reason: string) => void;
      /** Called with every line we send (method calls and responses), with the send time. */
      onSent?: (text: string, sentAt: number) => void;
      now?: () => number;
    } = {},
  ) {}

  onData(chunk: Buffer | string): void {
    for (const line of this.splitter.push(chunk)) this.handleLine(line);
  }

  onEnd(): void {
    for (const line of this.splitter.end()) this.handleLine(line);
    this.close("the peer closed the connection");
  }

  private handleLine(line: string): void {
    const receivedAt = (this.handlers.now ?? Date.now)();
    const parsed = parseObjectLine(line);
    if (!parsed.ok) {
      if (parsed.reason !== "blank") this.handlers.onInvalid?.(parsed.text, parsed.reason);
      return;
    }
    const message = classifyMessage(parsed.value);
    if (message.kind === "response") {
      const waiter = this.pending.get(message.id);
      if (waiter) {
        this.pending.delete(message.id);
        if (waiter.timer) clearTimeout(waiter.timer);
        waiter.resolve(message.error ? { ok: false, error: message.error } : { ok: true, result: message.result });
      }
    }
    this.handlers.onLine?.({ text: parsed.text, value: parsed.value, message, receivedAt });
  }

  private send(text: string): void {
    if (this.closed) throw new Error("connection closed");
    this.write(`${text}\n`);
    this.handlers.onSent?.(text, (this.handlers.now ?? Date.now)());
  }

  request(method: string, params?: unknown, timeoutMs = 30_000): Promise<RpcOutcome> {
    const id = this.nextId++;
    return new Promise<RpcOutcome>((resolve) => {
      if (this.closed) {
        resolve({ ok: false, error: { code: -32099, message: `cannot send ${method}: the agent's connection is closed` } });
        return;
      }
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              this.pending.delete(id);
              resolve({ ok: false, error: { code: -32098, message: `no answer to ${method} within ${timeoutMs} ms` } });
            }, timeoutMs)
          : null;
      this.pending.set(id, { resolve, timer, method });
      try {
        this.send(encodeRequest(id, method, params));
      } catch (error) {
        this.pending.delete(id);
        if (timer) clearTimeout(timer);
        resolve({ ok: false, error: { code: -32099, message: `cannot send ${method}: ${(error as Error).message}` } });
      }
    });
  }

  notify(method: string, params?: unknown): void {
    this.send(encodeNotification(method, params));
  }

  respond(id: RpcId, outcome: { result: unknown } | { error: RpcError }): void {
    this.send(encodeResponse(id, outcome));
  }

  /** Fails every pending request (the agent exited). */
  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const [id, waiter] of this.pending) {
      if (waiter.timer) clearTimeout(waiter.timer);
      waiter.resolve({ ok: false, error: { code: -32099, message: `${waiter.method}: ${reason}` } });
      this.pending.delete(id);
    }
  }
}
