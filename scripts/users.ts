// `npm run users -- <command>`: people, from the shell, for recovery — a lost password, a missed
// setup link, a person who left, a sign-in lockout. USAGE lists the commands; a password not given
// is generated and printed once.
import { parseArgs } from "node:util";
import { createPerson, generatePassword, newSetupLink, PersonError, resetPassword, unlock, unlockAddress } from "../lib/auth/people";
import { isRole, ROLES } from "../lib/auth/roles";
import { voidSetupCodes } from "../lib/auth/setup-code";
import { publicUrl } from "../lib/config";
import { recordAudit } from "../lib/db/audit";
import { listPeople, personByEmail, setDisabled, setRole } from "../lib/db/people";
import { fail, requireServedStore, table, when } from "./lib/cli";

const USAGE = `usage: npm run users -- <command>
  create --email <e> --role ${ROLES.join("|")} [--name <n>] [--password <p>]
                                   add a person (a password not given is generated and printed once)
  reset-password <email> [--password <p>]
                                   set a new password and end their sessions
  disable <email>                  end their sessions and revoke their API keys
  enable <email>                   let a disabled person sign in again
  set-role <email> <role>          change a person's role (${ROLES.join(", ")})
  unlock <email>                   forget their failed sign-ins (lifts a lockout)
  unlock --address <address>       forget the failed sign-ins from a client address
  setup-link                       a new one-time link to create the first admin (only while there is none)
  list                             everyone, with role and state
  help                             this text (also --help, -h)
`;
const ACTOR = "shell (npm run users)";
const COMMANDS = new Set(["create", "reset-password", "disable", "enable", "set-role", "unlock", "setup-link", "list"]);

/** A command line that is not one of USAGE's: said on stderr with the usage, exit 2 as a shell's usage errors do. */
function usageError(message: string): never {
  process.stderr.write(`users: ${message}
${USAGE}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      email: { type: "string" }, role: { type: "string" }, name: { type: "string" }, password: { type: "string" }, address: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
} catch (error) {
  usageError(error instanceof Error ? error.message : String(error));
}
const { values, positionals } = parsed;
const [command, argument, extra] = positionals;
if (values.help || command === "help") {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (command === undefined) usageError("which command?");
if (!COMMANDS.has(command)) usageError(`unknown command "${command}"`);

await requireServedStore("users");
const audit = (action: string, target: string, detail: string | null = null) => recordAudit({ at: Date.now(), actor: ACTOR, action, target, result: "ok", detail });

async function person(email: string | undefined) {
  if (!email) usageError("which person? Give their email.");
  return (await personByEmail(email)) ?? fail("users", `nobody with the email ${email} (npm run users -- list)`);
}

try {
  if (command === "create") {
    if (!values.email) usageError("--email is required");
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
    // Voided first, as every admin's creation does (lib/auth/better-auth.ts).
    if (extra === "admin") await voidSetupCodes();
    await setRole(who.id, extra);
    await audit("person.role", who.email, `${who.role} → ${extra}`);
    process.stdout.write(`${who.email} is now ${extra}\n`);
  } else if (command === "unlock") {
    if (values.address !== undefined) {
      const address = values.address.trim();
      if (!address) usageError("--address needs an address");
      const lifted = await unlockAddress(address);
      await audit("address.unlock", address, lifted ? "failed sign-ins forgotten" : "had no failed sign-ins");
      process.stdout.write(lifted ? `unlocked the address ${address}\n` : `the address ${address} had no failed sign-ins\n`);
    } else {
      const who = await person(argument);
      const lifted = await unlock(who.email);
      await audit("person.unlock", who.email, lifted ? "lockout lifted" : "was not locked");
      process.stdout.write(lifted ? `unlocked ${who.email}\n` : `${who.email} was not locked out\n`);
    }
  } else if (command === "setup-link") {
    const link = await newSetupLink(publicUrl());
    await audit("setup-link", "setup", "a new one-time setup link (any earlier one no longer works)");
    process.stdout.write(`${link}\n`);
  } else if (command === "list") {
    const people = await listPeople();
    process.stdout.write(`${table(people.map((p) => ({ email: p.email, name: p.name, role: p.role, state: p.disabled ? "disabled" : "active", created: when(p.createdAt) })))}\n`);
  }
} catch (error) {
  if (error instanceof PersonError) fail("users", error.message);
  throw error;
}
process.exit(0);
