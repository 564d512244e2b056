import { beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";

// The client alone: a signed-in operator, no database, no Next.js cache.
vi.mock("@/lib/server/auth", () => ({
  authorize: async () => ({ ok: true, caller: { principal: { actor: "ops@example.com", role: "admin" } } }),
}));
vi.mock("@/lib/db/audit", () => ({ recordAudit: async () => {} }));
vi.mock("next/cache", () => ({ revalidatePath: () => {} }));

const { action, formAction } = await import("./safe-action");

const ran = vi.fn();
const input = z.object({ id: z.string().min(1), note: z.string().max(500), destination: z.object({ name: z.string() }).optional() });
const annotate = action({ name: "incident.annotate", input }, (value) => {
  ran(value);
  return { ok: true as const };
});
const stop = formAction({ name: "stop", input: z.object({ key: z.string(), reason: z.string() }) }, (value) => {
  ran(value);
  return { ok: true as const };
});

function form(fields: Record<string, string>): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.set(name, value);
  return data;
}

beforeEach(() => ran.mockClear());

// No store holds a NUL (U+0000) in text (PostgreSQL refuses it outright): an action's input that
// carries one is refused like any invalid field, naming it, before the action runs.
describe("server action input", () => {
  it.each([
    ["a field", { id: "i1", note: "a\u0000b" }, "note: contains a NUL character (U+0000), which cannot be stored"],
    ["a nested field", { id: "i1", note: "ok", destination: { name: "\u0000" } }, "destination.name: contains a NUL character (U+0000), which cannot be stored"],
    ["a key", { id: "i1", note: "ok", "x\u0000": "y" }, "contains a NUL character (U+0000), which cannot be stored"],
  ])("refuses a NUL in %s, naming where", async (_where, value, error) => {
    expect(await annotate(value as z.input<typeof input>)).toEqual({ ok: false, error });
    expect(ran).not.toHaveBeenCalled();
  });

  it("refuses a NUL in a form field as a zod failure is refused: the same shape, the field named", async () => {
    expect(await stop(null, form({ key: "k1", reason: "stop\u0000" }))).toEqual({ ok: false, error: "reason: contains a NUL character (U+0000), which cannot be stored" });
    const invalid = await annotate({ id: "", note: "ok" });
    expect(invalid).toEqual({ ok: false, error: expect.stringMatching(/^id: /) });
    expect(ran).not.toHaveBeenCalled();
  });

  it("runs the action on input without one", async () => {
    expect(await annotate({ id: "i1", note: "fine — \u0001 is not NUL" })).toEqual({ ok: true });
    expect(await stop(null, form({ key: "k1", reason: "enough" }))).toEqual({ ok: true });
    expect(ran).toHaveBeenCalledTimes(2);
  });
});
