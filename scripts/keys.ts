// `npm run keys -- create --role viewer|operator|admin --name <name>` | `list` | `revoke <name>`:
// API keys for scripts, scrapers and automation, from the shell (where access to the database is
// admin by definition). A key made here belongs to a service account, not to a person. `create`
// prints the key alone on the last line of stdout; it is shown only this once.
import { parseArgs } from "node:util";
import { ApiKeyError, createApiKey } from "../lib/auth/api-keys";
import { isRole, ROLES } from "../lib/auth/roles";
import { listApiKeys, revokeApiKeys } from "../lib/db/api-keys";
import { recordAudit } from "../lib/db/audit";
import { fail, requireServedStore, table, when } from "./lib/cli";

const USAGE = `usage: npm run keys -- create --role ${ROLES.join("|")} --name <name> | list | revoke <name>`;
const ACTOR = "shell (npm run keys)";

await requireServedStore("keys");
const { values, positionals } = parseArgs({ allowPositionals: true, options: { role: { type: "string" }, name: { type: "string" } } });
const [command, argument] = positionals;

if (command === "create") {
  if (!values.name) fail("keys", `--name is required; ${USAGE}`);
  if (!isRole(values.role)) fail("keys", `--role must be one of ${ROLES.join(", ")}; ${USAGE}`);
  try {
    const { key } = await createApiKey({ name: values.name, role: values.role, owner: null });
    await recordAudit({ at: Date.now(), actor: ACTOR, action: "key.create", target: values.name, result: "ok", detail: `role ${values.role}; service account` });
    process.stderr.write(`API key "${values.name}" (${values.role}) created. Copy it now: it is stored only as a hash and not shown again.\n`);
    process.stdout.write(`${key}\n`);
  } catch (error) {
    if (error instanceof ApiKeyError) fail("keys", error.message);
    throw error;
  }
} else if (command === "list") {
  const keys = await listApiKeys();
  process.stdout.write(
    `${table(keys.map((k) => ({ name: k.name, role: k.role, key: `${k.prefix}…`, owner: k.ownerEmail ?? "service account", created: when(k.createdAt), "last used": when(k.lastUsedAt), state: k.revokedAt ? `revoked ${when(k.revokedAt)}` : "active" })))}\n`,
  );
} else if (command === "revoke") {
  if (!argument) fail("keys", `which key? ${USAGE}`);
  const revoked = await revokeApiKeys({ name: argument });
  if (revoked.length === 0) fail("keys", `no active key named "${argument}" (npm run keys -- list)`);
  await recordAudit({ at: Date.now(), actor: ACTOR, action: "key.revoke", target: argument, result: "ok", detail: `${revoked.length} key(s)` });
  process.stdout.write(`revoked ${revoked.length} key(s) named "${argument}"\n`);
} else {
  fail("keys", USAGE);
}
process.exit(0);
