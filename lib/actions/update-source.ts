"use server";

import { z } from "zod";
import { getSource, updateSourceSettings } from "@/lib/db/sources";
import { PRESET_NAMES } from "@/lib/retry";
import { applySourceSettings } from "@/lib/server/pipeline";
import { fail, formAction } from "./safe-action";

const onOff = (on: boolean) => (on ? "on" : "off");

/** A number field of the form: left blank (or absent), the global setting applies. */
const blankIsGlobal = (value: z.ZodType<number>) => z.preprocess((raw) => (raw === "" || raw === undefined ? null : raw), value.nullable());

/** Bounds of a source's incident thresholds: two threads are already a shared wall; a window from 10 s to 1 h. */
const INCIDENT_MIN_THREADS = 2;
const INCIDENT_WINDOW_SECONDS = { min: 10, max: 3600 } as const;

const thresholdText = (minThreads: number | null, windowMs: number | null) =>
  `${minThreads ?? "default"} threads in ${windowMs === null ? "default" : `${windowMs / 1000} s`}`;

/**
 * A source's policy preset, its capacity-recovery and resume-at-reset opt-ins (both off by
 * default) and its incident thresholds (blank: the global settings).
 */
export const updateSource = formAction(
  {
    name: "update-source",
    access: "admin",
    input: z.object({
      sourceId: z.string().min(1),
      policy: z.union([z.enum(PRESET_NAMES as [string, ...string[]]), z.literal("")]),
      /** A checkbox: present ("on") when ticked. */
      capacityRecovery: z.literal("on").optional().transform((value) => value === "on"),
      resumeAtReset: z.literal("on").optional().transform((value) => value === "on"),
      incidentMinThreads: blankIsGlobal(z.coerce.number().int(`Incident threads: a whole number, at least ${INCIDENT_MIN_THREADS}.`).min(INCIDENT_MIN_THREADS, `Incident threads: at least ${INCIDENT_MIN_THREADS}.`).max(10_000)),
      /** In seconds on the form; parsed into milliseconds, as stored. */
      incidentWindowSeconds: blankIsGlobal(
        z.coerce
          .number()
          .int(`Incident window: whole seconds.`)
          .min(INCIDENT_WINDOW_SECONDS.min, `Incident window: from ${INCIDENT_WINDOW_SECONDS.min} s to 1 h.`)
          .max(INCIDENT_WINDOW_SECONDS.max, `Incident window: from ${INCIDENT_WINDOW_SECONDS.min} s to 1 h.`),
      ).transform((seconds) => (seconds === null ? null : seconds * 1000)),
    }),
    resolve: async ({ sourceId }) => (await getSource(sourceId)) ?? fail("No such source."),
    revalidate: "/sources",
  },
  async ({ policy, capacityRecovery, resumeAtReset, incidentMinThreads, incidentWindowSeconds: incidentWindowMs }, { resolved: before }) => {
    await updateSourceSettings(before.id, { policy: policy || null, capacityRecovery, resumeAtReset, incidents: { incidentMinThreads, incidentWindowMs } });
    await applySourceSettings((await getSource(before.id))!);
    return { ok: true };
  },
  ({ policy, capacityRecovery, resumeAtReset, incidentMinThreads, incidentWindowSeconds: incidentWindowMs }, _result, before) => ({
    target: before.name,
    result: "ok",
    detail:
      `policy ${before.policy ?? "default"} → ${policy || "default"}; capacity recovery ${onOff(before.capacityRecovery)} → ${onOff(capacityRecovery)}` +
      `; resume at reset ${onOff(before.resumeAtReset)} → ${onOff(resumeAtReset)}` +
      `; incidents ${thresholdText(before.incidentMinThreads, before.incidentWindowMs)} → ${thresholdText(incidentMinThreads, incidentWindowMs)}`,
  }),
);
