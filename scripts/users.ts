// `npm run users -- <command>`: people, from the shell, for recovery — a lost password, a missed
// setup link, a person who left.
//   create --email <e> --role viewer|operator|admin [--name <n>] [--password <p>]
//   reset-password <email> [--password <p>]     (ends their sessions)
//   disable <email> | enable <email>            (disabling ends sessions and revokes their keys)
//   set-role <email> <role> | unlock <email> | setup-link | list
// A password not given is generated and printed once.
import { parseArgs } from "node:util";
import { createPerson, generatePassword, newSetupLink, PersonError, resetPassword, unlock } from "../lib/auth/people";
import { isRole, ROLES } from "../lib/auth/roles";
import { publicUrl } from "../lib/config";
import { recordAudit } from "../lib/db/audit";
import { listPeople, personByEmail, setDisabled, setRole } from "../lib/db/people";
import { fail, requireServedStore, table, when } from "./lib/cli";

const USAGE = "usage: npm run users -- create --email <e> --role <role> [--name <n>] [--password <p>] | reset-password <email> [--password <p>] | disable <email> | enable <email> | set-role <email> <role> | unlock <email> | setup-link | list";
const ACTOR = "shell (npm run users)";

await requireServedStore("users");
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { email: { type: "string" }, role: { type: "string" }, name: { type: "string" }, password: { type: "string" } },
});
const [command, argument, extra] = positionals;
const audit = (action: string, target: string, detail: string | null = null) => recordAudit({ at: Date.now(), actor: ACTOR, action, target, result: "ok", detail });

async function person(email: string | undefined) {
  if (!email) fail("users", `which person? ${USAGE}`);
  return (await personByEmail(email)) ?? fail("users", `nobody with the email ${email} (npm run users -- list)`);
}

try {
  if (command === "create") {
    if (!values.email) fail("users", `--email is required; ${USAGE}`);
    if (!isRole(values.role)) fail("users", `--role must be one of ${ROLES.join(", ")}`);
    const password = values.password ?? generatePassword();
    const created = await createPerson({ email: values.email, name: values.name, password, role: values.role });
    await audit("person.create", created.email, `role ${created.role}`);
    process.stdout.write(`created ${created.email} (${created.role})${values.password ? "" : `\npassword: ${password}`}\n`);
  } else if (command === "reset-password") {
    const who = await person(argument);
    const password = values.password ?? generatePassword();
    await resetPassword(who.id, password);
    await audit("person.reset-password", who.email, "sessions ended");
    process.stdout.write(`new password for ${who.email}${values.password ? " set" : `: ${password}`}\n`);
  } else if (command === "disable" || command === "enable") {
    const who = await person(argument);
    await setDisabled(who.id, command === "disable");
    await audit(`person.${command}`, who.email, command === "disable" ? "sessions ended, API keys revoked" : null);
    process.stdout.write(`${command}d ${who.email}\n`);
  } else if (command === "set-role") {
    const who = await person(argument);
    if (!isRole(extra)) fail("users", `the role must be one of ${ROLES.join(", ")}`);
    await setRole(who.id, extra);
    await audit("person.role", who.email, `${who.role} → ${extra}`);
    process.stdout.write(`${who.email} is now ${extra}\n`);
  } else if (command === "unlock") {
    const who = await person(argument);
    const lifted = await unlock(who.email);
    await audit("person.unlock", who.email, lifted ? "lockout lifted" : "was not locked");
    process.stdout.write(lifted ? `unlocked ${who.email}\n` : `${who.email} was not locked out\n`);
  } else if (command === "setup-link") {
    const link = await newSetupLink(publicUrl());
    await audit("setup-link", "setup", "a new one-time setup link (any earlier one no longer works)");
    process.stdout.write(`${link}\n`);
  } else if (command === "list") {
    const people = await listPeople();
    process.stdout.write(`${table(people.map((p) => ({ email: p.email, name: p.name, role: p.role, state: p.disabled ? "disabled" : "active", created: when(p.createdAt) })))}\n`);
  } else {
    fail("users", USAGE);
  }
} catch (error) {
  if (error instanceof PersonError) fail("users", error.message);
  throw error;
}
process.exit(0);
