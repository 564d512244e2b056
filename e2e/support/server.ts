/** The test server (scripts/lib/server.ts) and the HTTP helpers the suites use on it. */
import Database from "better-sqlite3";
import pg from "pg";
import { startServer as startBuiltServer, type RunningServer } from "../../scripts/lib/server";
import { e2eStore, freshE2eDatabase } from "./e2e-store";

export { type RunningServer };

/**
 * The built app on a fresh database of the store the run chose (e2e-store.ts): a SQLite file by
 * default, a new database in the run's PostgreSQL cluster when RADAR_E2E_STORE=postgres.
 */
export async function startServer(env: Record<string, string> = {}, options: Parameters<typeof startBuiltServer>[1] = {}): Promise<RunningServer> {
  if (e2eStore() === "postgres" && !options.databaseFile && !options.databaseUrl) options = { ...options, databaseUrl: await freshE2eDatabase() };
  return startBuiltServer(env, options);
}

/** Which store a server runs on (a suite checks what only one store has, such as SQLite's WAL). */
export const storeOfServer = (server: RunningServer): "sqlite" | "postgres" => (server.databaseUrl.startsWith("file:") ? "sqlite" : "postgres");

/**
 * Plain SQL on the server's database, on either store, beside the running server: a query's rows,
 * or none for a change (a test moving a session's time). Write SQL both accept: identifiers
 * quoted ("tokenHash"), `?` placeholders (numbered for PostgreSQL here).
 */
export async function queryDatabase<T = Record<string, unknown>>(server: RunningServer, sql: string, params: unknown[] = []): Promise<T[]> {
  if (storeOfServer(server) === "sqlite") {
    const file = new Database(server.databaseFile, { timeout: 5_000 });
    try {
      const statement = file.prepare(sql);
      if (statement.reader) return statement.all(...params) as T[];
      statement.run(...params);
      return [];
    } finally {
      file.close();
    }
  }
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    let n = 0;
    return (await client.query(sql.replace(/\?/g, () => `$${++n}`), params)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * The credential a call needs by its path: a source's ingest token for ingestion and the agent's
 * directives; the server's admin API key for every read and operator call.
 */
export function credentialFor(server: RunningServer, pathname: string): string {
  return /^\/api\/v1\/(events|ingest\/|directives)|^\/v1\/(logs|traces|metrics)$/.test(pathname) ? server.token : server.apiKey;
}

export async function post(server: RunningServer, pathname: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.url}${pathname}`, {
    method: "POST",
    headers: { authorization: `Bearer ${credentialFor(server, pathname)}`, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as any) : null };
}

/** GET with the path's credential (see credentialFor), another one, or none (`null`). */
export async function get(server: RunningServer, pathname: string, token: string | null = credentialFor(server, pathname)) {
  const response = await fetch(`${server.url}${pathname}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as any) : null };
}

/** A viewer's read of any body (JSON, NDJSON, CSV) as text, with the server's API key. */
export async function download(server: RunningServer, pathname: string) {
  const response = await server.fetch(pathname);
  return { status: response.status, text: await response.text() };
}

/** A thread's detail (`GET /api/v1/threads/:id`, a viewer's read); anything but 200 throws with the answer. */
export async function threadDetail(server: RunningServer, id: string) {
  const response = await get(server, `/api/v1/threads/${encodeURIComponent(id)}`);
  if (response.status !== 200) throw new Error(`thread ${id}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}
