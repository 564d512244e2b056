// Opens and migrates the database before the server starts, so a bad DATABASE_URL or an
// unwritable data folder stops `npm start` at once with one clear line instead of a stack trace.
import { openDatabase } from "../lib/db/client";
import { DatabaseConfigError, resolveDatabasePath } from "../lib/db/config";

try {
  const handles = openDatabase(resolveDatabasePath());
  handles.sql.close();
} catch (error) {
  const message = error instanceof DatabaseConfigError ? error.message : `cannot open the database: ${(error as Error).message}`;
  process.stderr.write(`[radar] ${message}\n`);
  process.exit(1);
}
