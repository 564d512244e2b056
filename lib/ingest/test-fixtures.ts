/** Test helper: the real-client captures (lib/ingest/fixtures/real-clients, or $RADAR_FIXTURES). */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { normalizeBatch } from "./batch";
import { parseCapture, type ParsedCapture } from "./capture";
import type { BatchResult } from "./types";

/**
 * RADAR_FIXTURES is read here, not in lib/config: it only points the test suites at another
 * folder of captures and never configures the app (no server code imports this file).
 */
export function fixturesDir(): string {
  return process.env.RADAR_FIXTURES
    ? path.resolve(process.env.RADAR_FIXTURES)
    : path.resolve(import.meta.dirname, "fixtures", "real-clients");
}

export function captureNames(): string[] {
  const dir = fixturesDir();
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => f.replace(/\.jsonl$/, ""))
    .sort();
}

export function readCapture(name: string): string {
  return readFileSync(path.join(fixturesDir(), `${name}.jsonl`), "utf8");
}

export function loadCapture(name: string): ParsedCapture {
  return parseCapture(readCapture(name));
}

/** Receive time for a capture: just after its last line, like an importer posting it at once. */
export function captureReceivedAt(capture: ParsedCapture): number {
  let last = 0;
  for (const item of capture.items) if (typeof item.at === "number" && item.at > last) last = item.at;
  return last + 1000;
}

export function normalizeCapture(name: string): { capture: ParsedCapture; result: BatchResult; receivedAt: number } {
  const capture = loadCapture(name);
  const receivedAt = captureReceivedAt(capture);
  return { capture, result: normalizeBatch(capture.format, capture.items, { receivedAt }), receivedAt };
}
