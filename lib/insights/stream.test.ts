import { describe, expect, it } from "vitest";
import { exportFilename, exportStream, type ExportFormat, type ExportRow } from "./stream";

const columns = ["id", "note"] as const;

function* batches(...chunks: ExportRow[][]) {
  yield* chunks;
}

async function read(stream: ReadableStream<Uint8Array>): Promise<{ text: string; chunks: number }> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let chunks = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { text, chunks };
    chunks++;
    text += decoder.decode(value, { stream: true });
  }
}

describe("streamed exports", () => {
  const rows = [[{ id: 1, note: "=cmd", extra: "dropped" }], [], [{ id: 2 }]];
  it.each([
    ["json", '[\n{"id":1,"note":"=cmd"},\n{"id":2,"note":null}\n]\n'],
    ["ndjson", '{"id":1,"note":"=cmd"}\n{"id":2,"note":null}\n'],
    ["csv", "id,note\r\n1,'=cmd\r\n2,\r\n"],
  ] as const)("%s: stable columns in order, a chunk per non-empty batch", async (format, expected) => {
    const { text, chunks } = await read(exportStream(format, columns, batches(...rows)));
    expect(text).toBe(expected);
    expect(chunks).toBeGreaterThanOrEqual(2);
    if (format === "json") expect(JSON.parse(text)).toHaveLength(2);
  });

  it.each([
    ["json", "[]\n"],
    ["ndjson", ""],
    ["csv", "id,note\r\n"],
  ] as const)("%s with no rows is still valid", async (format: ExportFormat, expected) => {
    expect((await read(exportStream(format, columns, batches()))).text).toBe(expected);
  });

  it("wraps rows in an envelope when asked", async () => {
    const { text } = await read(
      exportStream("json", columns, batches([{ id: 1 }]), { jsonOpen: '{"thread":{"id":"t"},"timeline":[', jsonClose: "]}" }),
    );
    expect(JSON.parse(text)).toEqual({ thread: { id: "t" }, timeline: [{ id: 1, note: null }] });
  });

  it("reads a batch only when the client asks for more", async () => {
    let pulled = 0;
    function* counting() {
      for (let i = 0; i < 100; i++) {
        pulled++;
        yield [{ id: i }];
      }
    }
    const reader = exportStream("ndjson", columns, counting()).getReader();
    await reader.read();
    expect(pulled).toBeLessThanOrEqual(2);
    await reader.cancel();
  });

  it("names files by kind and instant", () => {
    expect(exportFilename("attempts", "csv", Date.UTC(2026, 10, 29, 14, 5, 0, 123))).toBe("radar-attempts-20261129T140500Z.csv");
    expect(exportFilename('thread a/b"c', "json", 0)).toBe("radar-thread_a_b_c-19700101T000000Z.json");
  });
});
