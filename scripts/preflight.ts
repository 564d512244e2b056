// Reads the configuration, opens and migrates the database before the server starts, so a bad
// setting (DATABASE_URL included) or an unwritable data folder stops `npm start` at once with
// one clear line instead of a stack trace.
import { openDatabase } from "../lib/db/client";
import { ConfigError } from "../lib/config";
import { resolveDatabasePath } from "../lib/db/config";

try {
  const handles = openDatabase(resolveDatabasePath());
  handles.sql.close();
} catch (error) {
  const message = error instanceof ConfigError ? error.message : `cannot open the database: ${(error as Error).message}`;
  process.stderr.write(`[radar] ${message}\n`);
  process.exit(1);
}
