/** An OTLP export is measured before it is decoded: the bomb of issue 42 never reaches the decoder. */
import { gzipSync } from "node:zlib";
import { describe, expect, it, vi } from "vitest";
import type { SourceRecord } from "@/lib/db/sources";
import { MAX_ITEMS, MAX_OTLP_VALUES } from "@/lib/ingest/limits";
import { decodeOtlpProtobuf } from "@/lib/ingest/otlp-protobuf";
import { readBody } from "./http";
import { handleOtlp, OTLP_BODY } from "./otlp-request";

vi.mock("@/lib/ingest/otlp-protobuf", async (original) => {
  const actual = await original<typeof import("@/lib/ingest/otlp-protobuf")>();
  return { ...actual, decodeOtlpProtobuf: vi.fn(actual.decodeOtlpProtobuf) };
});

/** 10 MB of the bytes 0a 00 (five million empty resource entries), gzipped to under 10 KB. */
const BOMB = gzipSync(Buffer.from(new Uint8Array(10_000_000).map((_, i) => (i % 2 === 0 ? 0x0a : 0x00))));
/** Never reached: a refusal comes before the export is admitted. */
const SOURCE = {} as SourceRecord;

describe("handleOtlp bounds the work before decoding", () => {
  it("refuses the protobuf bomb with 413 naming the bound, having decoded none of it", async () => {
    expect(BOMB.length).toBeLessThan(10_000);
    for (const signal of ["logs", "traces", "metrics"] as const) {
      const request = new Request(`http://radar.test/v1/${signal}`, { method: "POST", headers: { "content-type": "application/x-protobuf", "content-encoding": "gzip" }, body: BOMB });
      const bytes = await readBody(request, OTLP_BODY.maxBytes, { gzip: true });
      const answer = await handleOtlp(signal, request, { text: "", bytes }, SOURCE, Date.now());
      expect(answer.status).toBe(413);
      expect(answer.headers.get("content-type")).toBe("application/problem+json");
      const problem = await answer.json();
      expect(problem).toMatchObject({ bound: "records", limit: MAX_ITEMS, counted: MAX_ITEMS + 1 });
      expect(problem.detail).toContain(`MAX_ITEMS = ${MAX_ITEMS}`);
    }
    expect(decodeOtlpProtobuf).not.toHaveBeenCalled();
  });

  it("refuses a JSON export of more values than MAX_OTLP_VALUES before parsing it", async () => {
    const text = `{"resourceLogs":[${"{},".repeat(MAX_OTLP_VALUES)}{}]}`;
    const parse = vi.spyOn(JSON, "parse");
    const request = new Request("http://radar.test/v1/logs", { method: "POST", headers: { "content-type": "application/json" }, body: text });
    const answer = await handleOtlp("logs", request, { text, bytes: new Uint8Array() }, SOURCE, Date.now());
    expect(parse).not.toHaveBeenCalled();
    parse.mockRestore();
    expect(answer.status).toBe(413);
    expect(await answer.json()).toMatchObject({ bound: "values", limit: MAX_OTLP_VALUES });
  });
});
