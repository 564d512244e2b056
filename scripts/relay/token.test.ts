import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseRelayArgs, UsageError, type RelayConfig } from "./args";
import { chooseToken, readTokenFile, readTokenStdin, TokenError } from "./token";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-token-test-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function tokenFile(name: string, text: string, mode: number): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  fs.chmodSync(file, mode); // the umask does not apply to chmod
  return file;
}

describe("the token file", () => {
  it.each([0o600, 0o400])("is read when only its owner may read it (%o)", (mode) => {
    expect(readTokenFile(tokenFile(`ok-${mode}`, "rr_secret\n", mode))).toBe("rr_secret");
  });

  it.each([0o644, 0o640, 0o604, 0o620, 0o602, 0o660])("is refused when group or others have access (%o)", (mode) => {
    const file = tokenFile(`open-${mode}`, "rr_secret\n", mode);
    expect(() => readTokenFile(file)).toThrow(TokenError);
    expect(() => readTokenFile(file)).toThrow(`--token-file ${file}: mode 0${mode.toString(8)} lets other users read or change it; run \`chmod 600 ${file}\``);
  });

  it.each([
    ["empty", "", /is empty/],
    ["blank", "\n", /is empty/],
    ["two lines", "rr_a\nrr_b\n", /only the token, on one line/],
  ])("refuses a %s file", (name, text, message) => {
    expect(() => readTokenFile(tokenFile(name, text, 0o600))).toThrow(message);
  });

  it("names a file it cannot open, or one that is not a file", () => {
    expect(() => readTokenFile(path.join(dir, "missing"))).toThrow(/--token-file .*missing: cannot open it \(ENOENT\)/);
    expect(() => readTokenFile(dir)).toThrow(/not a regular file/);
  });

  it("refuses a file another user owns, naming the owner and the relay's uid", () => {
    const file = tokenFile("theirs", "rr_secret\n", 0o600);
    const owner = fs.statSync(file).uid;
    expect(() => readTokenFile(file, owner + 1)).toThrow(`--token-file ${file}: owned by uid ${owner}, not by the relay's user (uid ${owner + 1})`);
    expect(readTokenFile(file, owner)).toBe("rr_secret");
  });

  it("refuses a FIFO at once instead of waiting for a writer", () => {
    const fifo = path.join(dir, "fifo");
    execFileSync("mkfifo", ["-m", "600", fifo]);
    // In a process of its own: a relay blocked on the FIFO would block this test's thread too.
    // The time limit only turns a hang into a failure; the refusal comes without any wait.
    const script = `import { readTokenFile } from "./scripts/relay/token.ts";
      try { readTokenFile(${JSON.stringify(fifo)}); console.log("read"); } catch (error) { console.log(error.message); }`;
    const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "--eval", script], {
      encoding: "utf8", cwd: path.join(import.meta.dirname, "..", ".."), timeout: 30_000,
    });
    expect(child.signal).toBeNull();
    expect(child.stdout.trim()).toBe(`--token-file ${fifo}: not a regular file`);
  }, 60_000);

  it("reads standard input to its end", () => {
    expect(readTokenStdin(() => "rr_piped\n")).toBe("rr_piped");
    expect(() => readTokenStdin(() => "")).toThrow(/--token-stdin: standard input is empty/);
  });
});

describe("choosing the token", () => {
  const file = () => tokenFile("chosen", "rr_file\n", 0o600);

  it("takes the file or standard input without a warning", () => {
    expect(chooseToken({ tokenFile: file() }, {}, ["RADAR_TOKEN"])).toEqual({ token: "rr_file", origin: "file", warnings: [] });
    expect(chooseToken({ tokenStdin: true }, {}, ["RADAR_TOKEN"], () => "rr_in")).toEqual({ token: "rr_in", origin: "stdin", warnings: [] });
  });

  it("still takes --token and the environment, warning of the leak and naming the safer flags", () => {
    const flag = chooseToken({ token: "rr_flag" }, {}, ["RADAR_TOKEN"])!;
    expect(flag).toMatchObject({ token: "rr_flag", origin: "flag" });
    expect(flag.warnings).toEqual([expect.stringMatching(/--token puts the token in the command line.*\/proc\/\d+\/cmdline.*--token-file PATH.*--token-stdin/)]);
    const env = chooseToken({}, { RADAR_TOKEN: "rr_env" }, ["RADAR_TOKEN"])!;
    expect(env).toMatchObject({ token: "rr_env", origin: "env" });
    expect(env.warnings).toEqual([expect.stringMatching(/RADAR_TOKEN puts the token in this process's environment.*\/proc\/\d+\/environ.*--token-file PATH/)]);
  });

  it("warns when the variable is set although a safer way gave the token", () => {
    const choice = chooseToken({ tokenFile: file() }, { RADAR_TOKEN: "rr_env" }, ["RADAR_TOKEN"])!;
    expect(choice.token).toBe("rr_file");
    expect(choice.warnings).toEqual([expect.stringMatching(/RADAR_TOKEN is set in this process's environment.*unset it/)]);
  });

  it("takes one way only", () => {
    expect(() => chooseToken({ tokenFile: file(), token: "x" }, {}, ["RADAR_TOKEN"])).toThrow("--token-file and --token: give the token one way only");
    expect(chooseToken({}, {}, ["RADAR_TOKEN"])).toBeNull();
  });
});

describe("relay arguments for the token", () => {
  const env = { RADAR_URL: "http://127.0.0.1:3000" };

  it("reads --token-file and --token-stdin", () => {
    expect(parseRelayArgs(["claude", "--token-file", tokenFile("relay", "rr_relay\n", 0o600)], env)).toMatchObject({ token: "rr_relay", tokenWarnings: [] });
    expect(parseRelayArgs(["claude", "--token-stdin"], env, () => "rr_stdin\n")).toMatchObject({ token: "rr_stdin", tokenWarnings: [] });
    expect((parseRelayArgs(["claude", "--token", "rr_x"], env) as RelayConfig).tokenWarnings).toHaveLength(1);
  });

  it("refuses a token file others may read, and --token-stdin where stdin carries the agent's lines", () => {
    const open = tokenFile("relay-open", "rr_relay\n", 0o644);
    expect(() => parseRelayArgs(["claude", "--token-file", open], env)).toThrow(UsageError);
    expect(() => parseRelayArgs(["claude", "--token-file", open], env)).toThrow(/mode 0644 lets other users read or change it/);
    expect(() => parseRelayArgs(["pipe", "--format", "claude", "--token-stdin"], env, () => "rr")).toThrow(/--token-stdin: pipe mode reads the agent's lines/);
  });
});
