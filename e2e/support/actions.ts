/**
 * Server actions called over HTTP the way React calls them: the action's id (from the build's
 * manifest) in `Next-Action`, its arguments encoded as a reply, POSTed to a page that serves it.
 */
import fs from "node:fs";
import path from "node:path";
import { encodeReply } from "next/dist/compiled/react-server-dom-webpack/client.node.js";

const root = path.resolve(import.meta.dirname, "..", "..");

export interface BuiltAction {
  id: string;
  /** `lib/actions/sign-in.ts#signIn` */
  name: string;
  /** A page path that serves it (dynamic segments filled with "placeholder"). */
  page: string;
}

/** A dynamic segment (`[id]`, `[...all]`) filled with a placeholder. */
export const fillSegments = (pattern: string) => pattern.replace(/\[\.{0,3}[^\]]+\]/g, "placeholder");

/** Every server action of the last build. */
export function builtActions(): BuiltAction[] {
  const manifest = JSON.parse(fs.readFileSync(path.join(root, ".next", "server", "server-reference-manifest.json"), "utf8")) as {
    node: Record<string, { workers: Record<string, unknown>; filename: string; exportedName: string }>;
  };
  return Object.entries(manifest.node).map(([id, entry]) => ({
    id,
    name: `${entry.filename}#${entry.exportedName}`,
    page: fillSegments(Object.keys(entry.workers).find((worker) => !worker.includes("_not-found"))!.replace(/^app/, "").replace(/\/page$/, "") || "/"),
  }));
}

/** A `<form action>` action's fields, or a plain action's object argument. */
export type ActionInput = { object: unknown } | { form: Record<string, string | File> };

/** Calls an action on the server at `url`; the answer is read whole (`result` is the action's return value). */
export async function callAction(url: string, action: BuiltAction, input: ActionInput, headers: Record<string, string> = {}) {
  let args: unknown[];
  if ("form" in input) {
    const form = new FormData();
    for (const [key, value] of Object.entries(input.form)) form.set(key, value);
    args = [null, form];
  } else {
    args = [input.object];
  }
  const response = await fetch(`${url}${action.page}`, {
    method: "POST",
    redirect: "manual",
    headers: { "next-action": action.id, origin: url, accept: "text/x-component", ...headers },
    body: (await encodeReply(args)) as BodyInit,
  });
  const body = await response.text();
  return { response, body, result: actionResult(body) };
}

/** The action's return value in the RSC answer (the row after the root: `1:{…}`). */
function actionResult(body: string): { ok: boolean; error?: string } | null {
  const row = /^1:(\{.*\})$/m.exec(body);
  return row ? JSON.parse(row[1]) : null;
}

/** The action of the build with this name (`lib/actions/sign-in.ts#signIn`). */
export function builtAction(name: string): BuiltAction {
  const found = builtActions().find((a) => a.name === name);
  if (!found) throw new Error(`no server action ${name} in the build`);
  return found;
}
