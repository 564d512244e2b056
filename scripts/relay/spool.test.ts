import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Spool } from "./spool";

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "relay-spool-test-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("relay spool", () => {
  it("keeps order across memory and disk, and drains the file", () => {
    const dir = tmp();
    const spool = new Spool({ dir, name: "codex", memoryLimitBytes: 100, readChunkBytes: 1024 });
    const lines = Array.from({ length: 50 }, (_, i) => `{"n":${i},"pad":"${"x".repeat(i % 7)}"}`);
    for (const l of lines) spool.push(l);
    expect(spool.length).toBe(50);
    expect(spool.onDisk).toBeGreaterThan(40);
    expect(fs.existsSync(spool.file)).toBe(true);
    const out: string[] = [];
    let i = 0;
    while (spool.length) {
      const batch = spool.peek(7);
      expect(batch.length).toBeGreaterThan(0);
      out.push(...batch);
      spool.drop(batch.length);
      // New lines arriving while draining still come after the old ones.
      if (i++ === 2) spool.push('{"n":"late"}');
    }
    expect(out).toEqual([...lines, '{"n":"late"}']);
    expect(fs.statSync(spool.file).size).toBe(0);
    spool.dispose();
    expect(fs.existsSync(spool.file)).toBe(false);
  });

  it("reads back a line longer than the read chunk", () => {
    const spool = new Spool({ dir: tmp(), name: "claude", memoryLimitBytes: 10, readChunkBytes: 1024 });
    const long = `{"big":"${"y".repeat(5000)}"}`;
    spool.push('{"a":1}');
    spool.push(long);
    spool.push('{"b":2}');
    expect(spool.peek(10)).toEqual(['{"a":1}', long, '{"b":2}'].slice(0, spool.peek(10).length));
    const all: string[] = [];
    while (spool.length) {
      const b = spool.peek(10);
      all.push(...b);
      spool.drop(b.length);
    }
    expect(all).toEqual(['{"a":1}', long, '{"b":2}']);
  });

  it("limits a peek by bytes but always returns at least one line", () => {
    const spool = new Spool({ dir: tmp(), name: "codex" });
    spool.push(`{"a":"${"1".repeat(100)}"}`);
    spool.push(`{"b":"${"2".repeat(100)}"}`);
    expect(spool.peek(10, 50)).toHaveLength(1);
    expect(spool.peek(10, 500)).toHaveLength(2);
  });

  it("dumps what was not delivered, memory and disk, in order", () => {
    const spool = new Spool({ dir: tmp(), name: "codex-exec", memoryLimitBytes: 20 });
    for (let i = 0; i < 5; i++) spool.push(`{"i":${i}}`);
    spool.drop(1);
    const file = spool.dumpUndelivered("codex-exec")!;
    expect(fs.readFileSync(file, "utf8")).toBe('{"i":1}\n{"i":2}\n{"i":3}\n{"i":4}\n');
    expect(new Spool({ dir: tmp(), name: "x" }).dumpUndelivered("x")).toBeNull();
  });
});

describe("relay spool memory bound", () => {
  it("reads back from disk only as much as memory allows", () => {
    const spool = new Spool({ dir: tmp(), name: "codex", memoryLimitBytes: 100 });
    for (let i = 0; i < 40; i++) spool.push(`{"n":${i},"p":"${"z".repeat(20)}"}`);
    const first = spool.peek(100);
    expect(first.length).toBeLessThan(10);
    expect(spool.onDisk).toBeGreaterThan(30);
    let total = 0;
    while (spool.length) {
      const b = spool.peek(100);
      total += b.length;
      spool.drop(b.length);
    }
    expect(total).toBe(40);
    spool.dispose();
  });
});
