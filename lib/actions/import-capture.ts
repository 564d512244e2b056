"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { recordAudit } from "@/lib/db/audit";
import { getSource } from "@/lib/db/sources";
import { CaptureParseError, normalizeBatch, parseCapture } from "@/lib/ingest";
import { authorizeOperator } from "@/lib/server/auth";
import { ingestLines } from "@/lib/server/pipeline";

const MAX_CAPTURE_BYTES = 20 * 1024 * 1024;

export type ImportCaptureState =
  | { ok: true; format: string; accepted: number; duplicates: number; rejected: number; skipped: number }
  | { ok: false; error: string };

/**
 * Sources page upload: a capture file (fixtures/real-clients format) replayed through the
 * native adapter with its original timing, into the chosen source. Re-importing is harmless.
 */
export async function importCapture(formData: FormData): Promise<ImportCaptureState> {
  const sourceId = z.string().min(1).safeParse(formData.get("sourceId"));
  const file = formData.get("file");
  if (!sourceId.success) return { ok: false, error: "sourceId: choose a source." };
  if (!(file instanceof File) || file.size === 0) return { ok: false, error: "file: choose a capture file (.jsonl)." };
  if (file.size > MAX_CAPTURE_BYTES) return { ok: false, error: `file: larger than ${MAX_CAPTURE_BYTES / 1024 / 1024} MiB.` };
  const operator = await authorizeOperator("import");
  const source = await getSource(sourceId.data);
  if (!source) return { ok: false, error: "No such source." };
  let outcome: ImportCaptureState;
  try {
    const capture = parseCapture(await file.text());
    const batch = normalizeBatch(capture.format, capture.items, { receivedAt: Date.now() });
    const result = await ingestLines(source, batch.lines);
    outcome = { ok: true, format: capture.format, accepted: result.accepted, duplicates: result.duplicates, rejected: batch.rejected.length, skipped: capture.skipped };
  } catch (error) {
    if (!(error instanceof CaptureParseError)) throw error;
    outcome = { ok: false, error: error.message };
  }
  await recordAudit({
    at: Date.now(),
    actor: operator.name,
    action: "import",
    target: `${source.name}: ${file.name}`,
    result: outcome.ok ? "ok" : "rejected",
    detail: outcome.ok ? `${outcome.format}: ${outcome.accepted} accepted, ${outcome.duplicates} duplicates, ${outcome.rejected} rejected` : outcome.error,
  });
  revalidatePath("/sources");
  return outcome;
}
