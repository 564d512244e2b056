/**
 * Bounds every line before an adapter reads it: nesting is measured without recursion (a line
 * nested thousands deep is refused before anything recursive walks it), over-long strings are
 * cut and marked, and a raw payload too large to keep whole is stored as a marked preview.
 * Pure; lines within the bounds come back as the very same object.
 */
import { MAX_DEPTH, MAX_RAW_CHARS, MAX_STORED_TIME, MAX_STRING_CHARS, MIN_STORED_TIME } from "./limits";

export type BoundedItem = { ok: true; item: unknown } | { ok: false; error: string };

export function boundItem(item: unknown): BoundedItem {
  let longStrings = false;
  let nul = false;
  // Two parallel stacks (node, its depth): no pair allocated per value of every line.
  const nodes: unknown[] = [item];
  const depths: number[] = [0];
  while (nodes.length > 0) {
    const node = nodes.pop();
    const depth = depths.pop()!;
    if (typeof node === "string") {
      if (node.length > MAX_STRING_CHARS) longStrings = true;
      if (node.includes("\u0000")) nul = true;
      continue;
    }
    if (node === null || typeof node !== "object") continue;
    if (depth >= MAX_DEPTH) return { ok: false, error: `nested deeper than ${MAX_DEPTH} levels` };
    if (Array.isArray(node)) {
      for (const value of node) {
        nodes.push(value);
        depths.push(depth + 1);
      }
    } else {
      const object = node as Record<string, unknown>;
      for (const key in object) {
        if (!Object.hasOwn(object, key)) continue;
        if (key.length > MAX_STRING_CHARS) longStrings = true;
        if (key.includes("\u0000")) nul = true;
        nodes.push(object[key]);
        depths.push(depth + 1);
      }
    }
  }
  // Only a line that has a NUL pays for finding where (its depth is bounded by now).
  if (nul) return { ok: false, error: nulError(nulPath(item) ?? "") };
  return { ok: true, item: longStrings ? cutStrings(item) : item };
}

/**
 * The one rule for NUL (U+0000): neither store can hold it in text (PostgreSQL refuses it
 * outright), so input carrying one is refused, naming where, instead of failing on write.
 */
export function nulError(where: string): string {
  const what = "contains a NUL character (U+0000), which cannot be stored";
  return where ? `${where}: ${what}` : what;
}

/**
 * Where the first NUL of a JSON value lies: "" for the value itself, "error.message" for a
 * field, "details.2" for an array item, the parent's path for a key; null when there is none.
 * Iterative, so a deeply nested body costs no stack.
 */
export function nulPath(value: unknown): string | null {
  const nodes: unknown[] = [value];
  const paths: string[] = [""];
  const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
  while (nodes.length > 0) {
    const node = nodes.pop();
    const path = paths.pop()!;
    if (typeof node === "string") {
      if (node.includes("\u0000")) return path;
      continue;
    }
    if (node === null || typeof node !== "object") continue;
    const entries: [string, unknown][] = Array.isArray(node) ? node.map((v, i) => [String(i), v]) : Object.entries(node);
    // Pushed in reverse: the first NUL in reading order is found first.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i];
      if (!Array.isArray(node) && key.includes("\u0000")) return path;
      nodes.push(child);
      paths.push(join(path, key));
    }
  }
  return null;
}

/**
 * A string with every lone surrogate (valid in JSON, not in UTF-8) replaced by U+FFFD: what the
 * database would store anyway, so an id means the same thing before and after it is saved, and a
 * permalink built from it can be encoded.
 */
export function wellFormed(text: string): string {
  return text.toWellFormed();
}

/** A string cut to the bound, saying so and how long it was. */
export function cutString(text: string, max = MAX_STRING_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}… [truncated: ${text.length} characters]` : text;
}

/** Depth is already bounded here, so plain recursion is safe. */
function cutStrings(node: unknown): unknown {
  if (typeof node === "string") return cutString(node);
  if (node === null || typeof node !== "object") return node;
  if (Array.isArray(node)) return node.map(cutStrings);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[cutString(key)] = cutStrings(value);
  return out;
}

/** A payload kept whole when its JSON fits, else `{truncated: true, chars, preview}`. */
export function boundPayload(value: unknown): unknown {
  return boundPayloadJson(value).value;
}

/** boundPayload, with the JSON of what is kept: measuring a payload already encodes it, so storage need not again. */
export function boundPayloadJson(value: unknown): { value: unknown; json: string } {
  const json = JSON.stringify(value) ?? "null";
  if (json.length <= MAX_RAW_CHARS) return { value, json };
  const preview = { truncated: true, chars: json.length, preview: json.slice(0, MAX_RAW_CHARS) };
  return { value: preview, json: JSON.stringify(preview) };
}

/**
 * The one rule for times: null when epoch ms `ms` is one both stores hold (MIN_STORED_TIME to
 * MAX_STORED_TIME), else why not — meant to follow "<field>: ".
 */
export function storedTimeError(ms: number): string | null {
  return ms >= MIN_STORED_TIME && ms <= MAX_STORED_TIME ? null : "expected a time between 0001-01-01 and 9999-12-31 (UTC)";
}
