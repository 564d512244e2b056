/**
 * normalizeBatch: one request's items → normalized lines + rejected items (by index).
 * Good items are kept when others are rejected; nothing here is I/O.
 */
import { normalizeCanonical } from "./canonical";
import { normalizeClaude } from "./claude";
import { normalizeCodexAppServer } from "./codex-app-server";
import { normalizeCodexExec } from "./codex-exec";
import { deriveKey, keyMaterial, OccurrenceCounter } from "./key";
import { InvalidLine } from "./native";
import type { BatchContext, BatchResult, IngestFormat, NormalizedLine, RejectedItem } from "./types";
import { isObject } from "./util";

export function normalizeCanonicalBatch(items: unknown[], ctx: BatchContext): BatchResult {
  const lines: NormalizedLine[] = [];
  const rejected: RejectedItem[] = [];
  const counter = new OccurrenceCounter();
  let threadId = ctx.threadId ?? null;
  let turnId = ctx.turnId ?? null;
  items.forEach((item, index) => {
    if (item instanceof InvalidLine) return; // already reported by parseBody
    const result = normalizeCanonical(item, ctx.receivedAt, index);
    if (!result.ok) {
      rejected.push({ index, error: result.error });
      return;
    }
    const line = result.line;
    const event = line.event!;
    if (!(isObject(item) && typeof item.id === "string")) {
      const material = keyMaterial({ format: "canonical", threadId: event.threadId, line: item, wrappedAt: null });
      line.idempotencyKey = deriveKey(material, counter.next(material), "canonical");
    }
    if (event.threadId !== threadId) turnId = null;
    threadId = event.threadId;
    if (event.turnId) turnId = event.turnId;
    lines.push(line);
  });
  return { lines, rejected, context: { threadId, turnId } };
}

export function normalizeBatch(format: IngestFormat, items: unknown[], ctx: BatchContext): BatchResult {
  switch (format) {
    case "canonical":
      return normalizeCanonicalBatch(items, ctx);
    case "codex":
      return normalizeCodexAppServer(items, ctx);
    case "codex-exec":
      return normalizeCodexExec(items, ctx);
    case "claude":
      return normalizeClaude(items, ctx);
  }
}
