/**
 * Is this error the store failing rather than the data it was given? A thread whose unit of work
 * fails for such a reason (disk full, I/O, a lost connection, a database restarting, a deadlock
 * with another instance) is no fault of the thread: the watchdog must not quarantine it, only try
 * again on its next tick.
 *
 * SQLite: every SQLITE_* code but a constraint or type mismatch (SQLITE_CONSTRAINT*,
 * SQLITE_MISMATCH: the data broke a rule, as PostgreSQL's class 23, which is not listed either).
 * PostgreSQL (SQLSTATE, as node-postgres reports it): class 08
 * connection exception, 40 transaction rollback (deadlock, serialization), 53 insufficient
 * resources (disk full, out of memory, too many connections), 57P01-57P05 operator intervention
 * (shutdown, cannot connect now, idle timeouts), 58 system error (I/O), XX internal error.
 * Node's socket errors, and node-postgres's own connection errors that carry no code.
 */
const POSTGRES_CLASSES = ["08", "40", "53", "58", "XX"];
const POSTGRES_CODES = new Set(["57P01", "57P02", "57P03", "57P04", "57P05"]);
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
const POSTGRES_CLIENT_MESSAGES = [/^Connection terminated/, /timeout exceeded when trying to connect/, /not queryable/, /Cannot use a pool after calling end/];

export function isStoreFailure(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (code.startsWith("SQLITE_")) return !code.startsWith("SQLITE_CONSTRAINT") && code !== "SQLITE_MISMATCH";
    if (SOCKET_CODES.has(code) || POSTGRES_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code)) return POSTGRES_CLASSES.includes(code.slice(0, 2));
    return false;
  }
  const message = (error as { message?: unknown }).message;
  return typeof message === "string" && POSTGRES_CLIENT_MESSAGES.some((pattern) => pattern.test(message));
}
