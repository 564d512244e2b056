import { revalidatePath } from "next/cache";
import type { z } from "zod";
import { recordAudit, type AuditInput } from "@/lib/db/audit";
import { isStorageFull } from "@/lib/db/storage-full";
import type { Principal } from "@/lib/auth/principal";
import { nulError, nulPath } from "@/lib/ingest/bound";
import { authorize, type Access, type OperatorAction } from "@/lib/server/auth";
import { describeZodError } from "@/lib/validation";

/**
 * Every server action goes through `action` (or `formAction` for `<form action>`): the input is
 * parsed with its schema (after refusing a NUL, which no store holds), the caller authorized, the entity it names resolved, the audit entry
 * written from its declaration (the third argument), and the page revalidated. One result type for all of them.
 */
export type ActionFailure = { ok: false; error: string };
export type ActionResult<T extends object = {}, F extends object = {}> = ({ ok: true } & T) | (ActionFailure & F);

/** A refusal: what the operator sees next to the control. */
export function fail(error: string): ActionFailure {
  return { ok: false, error };
}

/** An audit entry as an action declares it; who and when are filled in, the action defaults to the action's name. */
export type AuditDraft = Omit<AuditInput, "at" | "actor" | "action"> & { action?: string };

/** What a handler returns: success with its data, or a refusal (possibly with data of its own). */
type Outcome = { ok: true } | ActionFailure;

export interface ActionSpec<S extends z.ZodType, R> {
  /** What the action does: its authorization and, by default, its audit action. */
  name: OperatorAction;
  /** Who may call it (default operator); a `public` action gets the principal when there is one. */
  access?: Exclude<Access, "ingest">;
  input: S;
  /** The entity the input names (e.g. a source), or a refusal. */
  resolve?: (input: z.output<S>) => R | ActionFailure | Promise<R | ActionFailure>;
  /** The page whose server-rendered data the action changes. */
  revalidate?: string;
}

export interface ActionContext<R> {
  /** Who called: always present unless the action is public. */
  principal: Principal;
  resolved: R;
  now: number;
}

type Run<S extends z.ZodType, R, O extends Outcome> = (input: z.output<S>, context: ActionContext<R>) => Promise<O> | O;

/** The audit entry for an outcome, or null when nothing is recorded. */
type Audit<S extends z.ZodType, R, O extends Outcome> = (input: z.output<S>, outcome: O, resolved: R) => AuditDraft | null;

function execute<S extends z.ZodType, R, O extends Outcome>(spec: ActionSpec<S, R>, run: Run<S, R, O>, audit?: Audit<S, R, O>) {
  return async (raw: unknown): Promise<O | ActionFailure> => {
    // Who is asking comes first: a caller without the permission learns nothing about the input.
    const authorized = await authorize(spec.access ?? "operator", null);
    if (!authorized.ok) return fail(((await authorized.response.json()) as { detail: string }).detail);
    // No store holds a NUL in text: refused as a bad field is, before anything reads the input.
    const nul = nulPath(raw);
    if (nul !== null) return fail(nulError(nul));
    const parsed = spec.input.safeParse(raw);
    if (!parsed.success) return fail(describeZodError(parsed.error));
    const { principal } = authorized.caller as { principal: Principal };
    const resolved = spec.resolve ? await spec.resolve(parsed.data) : (undefined as R);
    if (isRefusal(resolved)) return resolved;
    let outcome: O;
    try {
      outcome = await run(parsed.data, { principal, resolved, now: Date.now() });
      const entry = audit?.(parsed.data, outcome, resolved);
      if (entry) await recordAudit({ ...entry, action: entry.action ?? spec.name, at: Date.now(), actor: principal?.actor ?? "anonymous" });
    } catch (error) {
      // A full disk is the operator's to fix, not a crash of the page: say so next to the control.
      if (isStorageFull(error)) return fail("The server's disk is full, so this could not be saved completely. Free some space and try again.");
      throw error;
    }
    if (spec.revalidate) revalidatePath(spec.revalidate);
    return outcome;
  };
}

function isRefusal(value: unknown): value is ActionFailure {
  return typeof value === "object" && value !== null && (value as { ok?: unknown }).ok === false;
}

/** A server action called with an object (buttons that keep their own state). */
export function action<S extends z.ZodType, O extends Outcome, R = undefined>(
  spec: ActionSpec<S, R>,
  run: Run<S, R, O>,
  audit?: Audit<S, R, O>,
): (input: z.input<S>) => Promise<O | ActionFailure> {
  return execute(spec, run, audit);
}

/** A server action for `<form action>` with `useActionState`: the form's fields are its input. */
export function formAction<S extends z.ZodType, O extends Outcome, R = undefined>(
  spec: ActionSpec<S, R>,
  run: Run<S, R, O>,
  audit?: Audit<S, R, O>,
): (previous: O | ActionFailure | null, form: FormData) => Promise<O | ActionFailure> {
  const call = execute(spec, run, audit);
  return async (_previous, form) => call(Object.fromEntries(form));
}
