// Reads the configuration, checks where the server may listen, opens and migrates the database
// before the server starts, so a bad setting (DATABASE_URL included), a HOST beyond loopback
// without RADAR_PUBLIC_URL or an unwritable data folder stops `npm start` at once with one clear
// line instead of a stack trace.
import { openDatabase } from "../lib/db/client";
import { config, ConfigError } from "../lib/config";
import { resolveDatabasePath } from "../lib/db/config";
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
  const handles = openDatabase(resolveDatabasePath());
  handles.sql.close();
} catch (error) {
  const message = error instanceof ConfigError ? error.message : `cannot open the database: ${(error as Error).message}`;
  process.stderr.write(`[radar] ${message}\n`);
  process.exit(1);
}
