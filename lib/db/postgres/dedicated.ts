import type pg from "pg";

/**
 * Closes a dedicated connection (a leader's, a listener's) that is no longer wanted or already
 * broken: its listeners go, so its own end or error is not taken for a new failure, and an error
 * while closing is nobody's concern.
 */
export async function closeQuietly(client: pg.Client): Promise<void> {
  client.removeAllListeners();
  client.on("error", () => undefined);
  await client.end().catch(() => undefined);
}
