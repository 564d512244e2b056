import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { adoptOrphans, defaultSpoolDir, ensurePrivateDir, Spool, SpoolDirectoryError } from "./spool";

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

describe("relay spool durability: what was taken survives the relay being killed", () => {
  it("a relay killed with SIGKILL leaves its undelivered lines for the next one, from the committed offset", () => {
    const dir = tmp();
    // A real process that takes 5 lines, delivers 2, and is killed without any cleanup.
    const script = `
      import { Spool } from ${JSON.stringify(path.join(import.meta.dirname, "spool.ts"))};
      const spool = new Spool({ dir: ${JSON.stringify(dir)}, name: "codex" });
      for (let i = 0; i < 5; i++) spool.push(JSON.stringify({ i }));
      spool.drop(0);
      spool.peek(2);
      spool.drop(2);
      process.kill(process.pid, "SIGKILL");
    `;
    const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "--eval", script], { encoding: "utf8", cwd: path.join(import.meta.dirname, "..", "..") });
    expect(child.signal, child.stderr).toBe("SIGKILL");
    const orphans = adoptOrphans(dir, "codex");
    expect(orphans.map((o) => o.lines)).toEqual([['{"i":2}', '{"i":3}', '{"i":4}']]);
    orphans[0].release();
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it("a torn last line (killed mid-write) is left out; a live relay's journal is never adopted", () => {
    const dir = tmp();
    const dead = 2 ** 22 + 12_345; // above Linux's default pid_max: no such process
    fs.writeFileSync(path.join(dir, `claude-${dead}-0.spool.ndjson`), '{"a":1}\n{"b":2}\n{"c":', { mode: 0o600 });
    const live = new Spool({ dir, name: "claude" });
    live.push('{"mine":1}');
    expect(adoptOrphans(dir, "claude").map((o) => o.lines)).toEqual([['{"a":1}', '{"b":2}']]);
    live.dispose();
  });

  it("adopts only journals of its own format", () => {
    const dir = tmp();
    const dead = 2 ** 22 + 12_346;
    fs.writeFileSync(path.join(dir, `codex-exec-${dead}-0.spool.ndjson`), '{"x":1}\n', { mode: 0o600 });
    expect(adoptOrphans(dir, "codex")).toEqual([]);
    expect(adoptOrphans(dir, "codex-exec").map((o) => o.lines)).toEqual([['{"x":1}']]);
  });

  it("a journal that is a symlink is never followed", () => {
    const dir = tmp();
    const target = path.join(tmp(), "elsewhere.ndjson");
    fs.writeFileSync(target, '{"secret":1}\n');
    fs.symlinkSync(target, path.join(dir, `codex-${2 ** 22 + 1}-0.spool.ndjson`));
    expect(adoptOrphans(dir, "codex")).toEqual([]);
  });
});

describe("the spool directory is private", () => {
  it("is created 0700, with its journal 0600", () => {
    const dir = path.join(tmp(), "nested", "spool");
    const spool = new Spool({ dir, name: "codex" });
    spool.push('{"a":1}');
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(spool.file).mode & 0o777).toBe(0o600);
    spool.dispose();
  });
  it("refuses a directory others can read or write, naming it and the fix", () => {
    const dir = tmp();
    fs.chmodSync(dir, 0o755);
    expect(() => new Spool({ dir, name: "codex" })).toThrow(/readable or writable by others \(mode 755\); chmod 700/);
  });
  it("refuses a symlink in place of the directory", () => {
    const link = path.join(tmp(), "link");
    fs.symlinkSync(tmp(), link);
    expect(() => ensurePrivateDir(link)).toThrow(SpoolDirectoryError);
  });
  it("defaults to a per-user state directory, stable across runs", () => {
    expect(defaultSpoolDir({ XDG_STATE_HOME: "/home/u/.state" })).toBe("/home/u/.state/retry-radar/relay");
    expect(defaultSpoolDir({})).toBe(path.join(os.homedir(), ".local", "state", "retry-radar", "relay"));
  });
});
