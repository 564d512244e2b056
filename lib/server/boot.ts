import { db } from "@/lib/db/client";
import { DatabaseConfigError } from "@/lib/db/config";
import { ensureDefaultSource } from "./tokens";
import { startWatchdog } from "./watchdog";

const globalForBoot = globalThis as unknown as { __radarBooted?: boolean };

/** Server start: database ready, first source and its token, watchdog running. Once per process. */
export async function boot(): Promise<void> {
  if (globalForBoot.__radarBooted) return;
  globalForBoot.__radarBooted = true;
  try {
    db();
  } catch (error) {
    const message = error instanceof DatabaseConfigError ? error.message : `cannot open the database: ${(error as Error).message}`;
    process.stderr.write(`[radar] ${message}\n`);
    process.exit(1);
  }
  const { token } = await ensureDefaultSource(process.env.RADAR_INGEST_TOKEN || undefined);
  if (token) {
    const url = `http://${process.env.HOST || "127.0.0.1"}:${process.env.PORT || "3000"}`;
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
  startWatchdog();
}
