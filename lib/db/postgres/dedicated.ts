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

/**
 * A dedicated connection whose peer vanishes without closing its socket (power loss, a partition,
 * a NAT or balancer that forgets an idle connection) sends no FIN. The server's keepalive probes
 * then find it dead within about 8 s (and release what its session held, a leader's lock), and
 * tcp_user_timeout (ms) ends it as soon when data sent to it goes unacknowledged (a peer gone
 * mid-reply), where the system defaults would wait hours (keepalive) or ~15 min (tcp_retries2).
 */
export const DEAD_PEER_SETTINGS = "SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = 3; SET tcp_user_timeout = 8000";

/** The client's side of the same: its own keepalive probes, so an idle socket the path forgot errors. */
export const CLIENT_KEEPALIVE = { keepAlive: true, keepAliveInitialDelayMillis: 5_000 } as const;
