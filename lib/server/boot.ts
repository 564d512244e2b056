import { ensureFirstAdmin } from "@/lib/auth/people";
import { config, ConfigError, publicUrl, type Config } from "@/lib/config";
import { openStore, startTurn } from "@/lib/db/open-store";
import { within } from "@/lib/within";
import { recordSocketPeers } from "./socket-peer";
import { ensureDefaultSource } from "./tokens";
import { startRetention } from "./retention";
import { startUsageCount } from "./usage";
import { startWatchdog } from "./watchdog";
import { startLiveAcrossInstances } from "./instances";
import { startAlertDelivery } from "./alert-delivery";
import { markBooted } from "./boot-signal";
import { shared } from "@/lib/process-state";

const sharedForBoot = shared<{ booted?: boolean }>("booted", () => ({}));

/** Server start: database ready, first source and its token, watchdog, alert delivery, usage count and retention running. Once per process. */
export async function boot(): Promise<void> {
  if (sharedForBoot.booted) return;
  sharedForBoot.booted = true;
  // Under the listener (lib/server/listener) it writes the same address again; under a bare
  // `next start` or `next dev` it is what keeps a client from naming its own address.
  recordSocketPeers();
  let settings: Config;
  try {
    settings = config();
    // The store DATABASE_URL names, migrated; on PostgreSQL nothing opens a SQLite file.
    await openStore();
  } catch (error) {
    const message = error instanceof ConfigError ? error.message : `cannot open the database: ${(error as Error).message}`;
    process.stderr.write(`[radar] ${message}\n`);
    process.exit(1);
  }
  try {
    await seedStore(settings);
  } catch (error) {
    // A start that cannot finish stops with one line, rather than serving every request an error.
    process.stderr.write(`[radar] cannot start: ${(error as Error).message}\n`);
    process.exit(1);
  }
  startLiveAcrossInstances();
  await caughtUp(startWatchdog());
  startAlertDelivery();
  startUsageCount();
  startRetention();
  markBooted();
}

/** How long a start waits at most for the watchdog to catch up (a database that hangs must not hold it for good). */
export const CATCH_UP_WAIT_MS = 15_000;

/**
 * Waits for the watchdog's catch-up with the downtime (startWatchdog), at most CATCH_UP_WAIT_MS:
 * past that the start goes on, saying so, and the pass still ends on its own.
 */
async function caughtUp(catchUp: Promise<void>): Promise<void> {
  if ((await within(catchUp, CATCH_UP_WAIT_MS)).settled) return;
  process.stderr.write(`[radar] the watchdog is still catching up after ${CATCH_UP_WAIT_MS / 1000} s: serving meanwhile; deadlines that passed while the radar was down are applied as it goes\n`);
}

/**
 * The first source and its token, and the first admin (or the setup link), printed once when
 * created. Instances starting together on one PostgreSQL database take turns: one creates them,
 * the others find them.
 */
export function seedStore(settings: Config): Promise<void> {
  return startTurn(() => seedFirstStart(settings));
}

async function seedFirstStart(settings: Config): Promise<void> {
  const { token } = await ensureDefaultSource(settings.RADAR_INGEST_TOKEN);
  if (token) {
    // The address the Host allow-list answers to.
    const url = publicUrl(settings);
    // Printed once: only the hash is stored, so this is the only time it can be shown.
    process.stdout.write(
      [
        "",
        "┌─ Retry Radar is set up ────────────────────────────────────────────",
        `│ Dashboard:    ${url}`,
        `│ Ingest token: ${token}`,
        "│ (shown once: it is stored only as a hash; create more on the Sources page)",
        "└────────────────────────────────────────────────────────────────────",
        "",
      ].join("\n"),
    );
  }
  const { setupLink, pending } = await ensureFirstAdmin({ email: settings.RADAR_ADMIN_EMAIL, password: settings.RADAR_ADMIN_PASSWORD, baseUrl: publicUrl(settings) });
  if (setupLink) {
    // Printed once: it is the only way in until the first admin exists (a new one: `npm run users -- setup-link`).
    process.stdout.write(
      [
        "",
        "┌─ Create the first admin ───────────────────────────────────────────",
        `│ Open: ${setupLink}`,
        "│ (one use; lost it? `npm run users -- setup-link` prints a new one)",
        "└────────────────────────────────────────────────────────────────────",
        "",
      ].join("\n"),
    );
  } else if (pending) {
    process.stdout.write("[radar] Nobody can sign in yet: open the setup link printed on first start, or run `npm run users -- setup-link` for a new one.\n");
  }
}
