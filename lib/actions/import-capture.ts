"use server";

import { z } from "zod";
import { getSource } from "@/lib/db/sources";
import { CaptureParseError, normalizeBatch, parseCapture, withoutIgnored } from "@/lib/ingest";
import { MAX_CAPTURE_BYTES } from "@/lib/ingest/limits";
import { ingestLines } from "@/lib/server/pipeline";
import { fail, formAction } from "./safe-action";

/**
 * Sources page upload: a capture file (fixtures/real-clients format) replayed through the
 * native adapter with its original timing, into the chosen source. Re-importing is harmless.
 */
export const importCapture = formAction(
  {
    name: "import",
    input: z.object({
      sourceId: z.string({ error: "choose a source." }).min(1, "choose a source."),
      file: z
        .instanceof(File, { error: "choose a capture file (.jsonl)." })
        .refine((file) => file.size > 0, "choose a capture file (.jsonl).")
        .refine((file) => file.size <= MAX_CAPTURE_BYTES, `larger than ${MAX_CAPTURE_BYTES / 1024 / 1024} MiB.`),
    }),
    resolve: async ({ sourceId }) => (await getSource(sourceId)) ?? fail("No such source."),
    revalidate: "/sources",
  },
  async ({ file }, { resolved: source }) => {
    try {
      const capture = parseCapture(await file.text());
      const batch = normalizeBatch(capture.format, capture.items, { receivedAt: Date.now() });
      const result = await ingestLines(source, withoutIgnored(batch.lines).lines);
      return { ok: true, format: capture.format, accepted: result.accepted, duplicates: result.duplicates, rejected: batch.rejected.length, skipped: capture.skipped };
    } catch (error) {
      if (!(error instanceof CaptureParseError)) throw error;
      return fail(error.message);
    }
  },
  ({ file }, outcome, source) => ({
    target: `${source.name}: ${file.name}`,
    result: outcome.ok ? "ok" : "rejected",
    detail: outcome.ok ? `${outcome.format}: ${outcome.accepted} accepted, ${outcome.duplicates} duplicates, ${outcome.rejected} rejected` : outcome.error,
  }),
);
