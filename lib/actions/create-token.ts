"use server";

import { z } from "zod";
import { getSource } from "@/lib/db/sources";
import { createSource, createToken, generateToken } from "@/lib/server/tokens";
import { fail, formAction } from "./safe-action";

/** Issues an ingest token, shown once (only its hash is stored); optionally for a new source. */
export const createIngestToken = formAction(
  {
    name: "create-token",
    access: "admin",
    input: z.object({
      /** An existing source, or none to create a new source named `name`. */
      sourceId: z.string().min(1).optional(),
      name: z.string().trim().min(1).max(100).optional(),
      label: z.string().trim().max(100).optional(),
    }),
    resolve: async ({ sourceId }) => (sourceId ? ((await getSource(sourceId)) ?? fail("No such source.")) : null),
    revalidate: "/sources",
  },
  async ({ name, label }, { resolved: source }) => {
    if (source) return { ok: true, token: (await createToken(source.id, label || null)).token, sourceName: source.name };
    if (!name) return fail("name: a new source needs a name.");
    const token = generateToken();
    return { ok: true, token, sourceName: (await createSource(name, token)).name };
  },
  (_input, result) =>
    result.ok ? { target: result.sourceName, result: "ok", detail: `token ${result.token.slice(0, 7)}…` } : null,
);
