import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { NATIVE_FORMATS } from "@/lib/ingest/types";
import { THREAD_STATUSES, TROUBLE_KINDS } from "@/lib/retry/types";

/**
 * Adding a trouble kind, a native format or a status is a change in its one home plus the places
 * the type checker then points at: every label, colour and group map is typed
 * `Record<Kind, …>` (or `satisfies` it), so `tsc` names each one missing the new member. This
 * suite proves the other half: no second literal copy of a list exists for a new member to miss.
 */
const root = path.resolve(import.meta.dirname, "..");
const FOLDERS = ["app", "lib", "components", "scripts"];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "generated" || entry.name === "node_modules" ? [] : sources(full);
    return /\.(ts|tsx|mjs)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) ? [full] : [];
  });
}

/** Runs of three or more quoted strings separated by `,` or `|`: array literals and union types. */
const RUN = /(?:["'][\w.-]+["']\s*[,|]\s*){2,}["'][\w.-]+["']/g;

function copiesOf(list: readonly string[]): string[] {
  const members = new Set<string>(list);
  const found: string[] = [];
  for (const file of FOLDERS.flatMap((folder) => sources(path.join(root, folder)))) {
    for (const run of readFileSync(file, "utf8").match(RUN) ?? []) {
      const items = run.split(/[,|]/).map((item) => item.trim().slice(1, -1));
      if (items.every((item) => members.has(item))) found.push(path.relative(root, file));
    }
  }
  return found;
}

describe("each list has one home", () => {
  it.each([
    ["trouble kinds", TROUBLE_KINDS, "lib/retry/types.ts"],
    ["thread statuses", THREAD_STATUSES, "lib/retry/types.ts"],
    ["native formats", NATIVE_FORMATS, "lib/ingest/types.ts"],
  ])("%s are listed only in %s", (_name, list, home) => {
    expect(copiesOf(list)).toEqual([home]);
  });
});
