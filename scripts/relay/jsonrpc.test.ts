import { describe, expect, it } from "vitest";
import { classifyMessage, encodeRequest, JsonRpcPeer, type IncomingLine } from "./jsonrpc";

describe("relay JSON-RPC framing (codex app-server: JSONL, no jsonrpc field)", () => {
  it("classifies requests, notifications and responses", () => {
    expect(classifyMessage({ method: "turn/started", params: { threadId: "t" } })).toMatchObject({ kind: "notification", method: "turn/started" });
    expect(classifyMessage({ method: "item/commandExecution/requestApproval", id: 7, params: {} })).toMatchObject({ kind: "request", id: 7 });
    expect(classifyMessage({ id: 1, result: {} })).toMatchObject({ kind: "response", id: 1, result: {}, error: null });
    expect(classifyMessage({ id: 2, error: { code: -32600, message: "no active turn" } })).toMatchObject({
      kind: "response",
      error: { code: -32600, message: "no active turn" },
    });
    expect(classifyMessage({ hello: 1 })).toMatchObject({ kind: "invalid" });
    expect(encodeRequest(3, "turn/interrupt", { threadId: "t", turnId: "u" })).toBe(
      '{"method":"turn/interrupt","id":3,"params":{"threadId":"t","turnId":"u"}}',
    );
  });

  it("matches responses to requests, reports every line, and fails pending requests on close", async () => {
    const sent: string[] = [];
    const seen: IncomingLine[] = [];
    const peer = new JsonRpcPeer((line) => sent.push(line), { onLine: (l) => seen.push(l), now: () => 42 });
    const first = peer.request("initialize", { clientInfo: { name: "x" } });
    const second = peer.request("turn/interrupt", { threadId: "t", turnId: "u" });
    expect(sent).toEqual([
      '{"method":"initialize","id":1,"params":{"clientInfo":{"name":"x"}}}\n',
      '{"method":"turn/interrupt","id":2,"params":{"threadId":"t","turnId":"u"}}\n',
    ]);
    // Out of order, split across chunks, with a notification in between.
    peer.onData('{"id":2,"result":{}}\n{"method":"turn/completed","params":{"threadId":"t","turn":{"id":"u","status":"interr');
    peer.onData('upted"}}}\n');
    expect(await second).toEqual({ ok: true, result: {} });
    expect(seen.map((l) => l.message.kind)).toEqual(["response", "notification"]);
    expect(seen[1].receivedAt).toBe(42);
    const third = peer.request("turn/start", { threadId: "t", input: [] });
    peer.close("codex exited");
    expect(await first).toMatchObject({ ok: false, error: { message: "initialize: codex exited" } });
    expect(await third).toMatchObject({ ok: false });
    expect(await peer.request("x")).toMatchObject({ ok: false });
  });

  it("times out a request that is never answered", async () => {
    const peer = new JsonRpcPeer(() => undefined);
    expect(await peer.request("slow", undefined, 20)).toMatchObject({ ok: false, error: { message: "no answer to slow within 20 ms" } });
  });
});
