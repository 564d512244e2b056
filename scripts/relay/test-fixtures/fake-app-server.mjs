#!/usr/bin/env node
// A stand-in for `codex app-server` in the relay's unit tests: JSONL JSON-RPC on stdio.
// thread/start → a thread; turn/start → a turn that then reports a retry notice ("Reconnecting...
// 1/5") and waits; turn/interrupt → {} and turn/completed interrupted; a turn started with an
// empty input (a continuation) completes at once. Every request is logged to stderr as `REQ <json>`.
import readline from "node:readline";

let turns = 0;
const active = new Map(); // threadId → turnId
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  process.stderr.write(`REQ ${line}\n`);
  if (m.id === undefined) return; // notification (initialized)
  switch (m.method) {
    case "initialize":
      return send({ id: m.id, result: { userAgent: "fake/0.0.0", codexHome: "/tmp", platformFamily: "unix", platformOs: "linux" } });
    case "thread/start": {
      send({ id: m.id, result: { thread: { id: "thread-fake-1" } } });
      return send({ method: "thread/started", params: { thread: { id: "thread-fake-1", modelProvider: "mock" } } });
    }
    case "turn/start": {
      const turnId = `turn-fake-${++turns}`;
      const threadId = m.params.threadId;
      active.set(threadId, turnId);
      send({ id: m.id, result: { turn: { id: turnId, status: "inProgress", items: [] } } });
      send({ method: "turn/started", params: { threadId, turn: { id: turnId, status: "inProgress", items: [] } } });
      if (m.params.input.length === 0) {
        send({ method: "item/agentMessage/delta", params: { threadId, turnId, itemId: "i", delta: "continuing" } });
        active.delete(threadId);
        return send({ method: "turn/completed", params: { threadId, turn: { id: turnId, status: "completed", error: null } } });
      }
      return send({
        method: "error",
        params: {
          error: { message: "Reconnecting... 1/5", codexErrorInfo: { responseStreamDisconnected: { httpStatusCode: 429 } } },
          willRetry: true,
          threadId,
          turnId,
        },
      });
    }
    case "turn/interrupt": {
      const { threadId, turnId } = m.params;
      if (active.get(threadId) !== turnId) return send({ id: m.id, error: { code: -32600, message: `no active turn ${turnId}` } });
      active.delete(threadId);
      send({ id: m.id, result: {} });
      return send({ method: "turn/completed", params: { threadId, turn: { id: turnId, status: "interrupted", error: null } } });
    }
    default:
      return send({ id: m.id, error: { code: -32601, message: `unknown method ${m.method}` } });
  }
});
rl.on("close", () => process.exit(0));
