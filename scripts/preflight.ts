// Reads the configuration, checks where the server may listen, opens and migrates the database
// before the server starts, so a bad setting (DATABASE_URL included), a HOST beyond loopback
// without RADAR_PUBLIC_URL, an unwritable data folder or a PostgreSQL server that cannot be
// reached or refuses the login stops `npm start` at once with one clear line instead of a stack
// trace.
import { config, ConfigError } from "../lib/config";
import { closeStore, openStore } from "../lib/db/open-store";
import { listeningProblem } from "../lib/server/edge";

try {
  const { HOST, RADAR_PUBLIC_URL } = config();
  const listening = listeningProblem(HOST, RADAR_PUBLIC_URL);
  if (listening.refuse) {
    process.stderr.write(`[radar] not serving: ${listening.refuse}\n`);
    process.exit(1);
  }
  if (listening.warn) {
    const bar = "!".repeat(72);
    process.stderr.write(`[radar] ${bar}\n[radar] WARNING: ${listening.warn}\n[radar] ${bar}\n`);
  }
  await openStore();
  await closeStore();
} catch (error) {
  const message = error instanceof ConfigError ? error.message : `cannot open the database: ${(error as Error).message}`;
  process.stderr.write(`[radar] ${message}\n`);
  process.exit(1);
}
