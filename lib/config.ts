import { isIP } from "node:net";
import { z } from "zod";
import { parseHostPatterns } from "./alerts/address";
import type { DeliveryPolicy } from "./alerts/delivery";
import type { BlindSettings } from "./alerts/rules";
import { DEFAULT_INCIDENT_SETTINGS, type IncidentSettings } from "./retry/incidents";
import { STOP_GRACE_MS } from "./retry/reducer";
import { describeZodError } from "./validation";

/**
 * The deployment's configuration: the only reader of the environment in the app. Every variable
 * is optional; an empty one counts as unset. Each key here is one row of the README's
 * "Configuration" table (a test keeps the two equal), and a bad value stops the server with one
 * line naming the variable and what is wrong.
 */

/** A configuration value the operator must fix; printed as one clear line, never a stack. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** A number read from its text, refused (naming what was expected) unless `valid`. */
function numberWhere(expected: string, valid: (value: number) => boolean) {
  return z.string().transform((text, ctx) => {
    const value = Number(text);
    if (!valid(value)) {
      ctx.addIssue({ code: "custom", message: `expected ${expected}, got "${text}"` });
      return z.NEVER;
    }
    return value;
  });
}

const positive = (value: number) => Number.isFinite(value) && value > 0;
const millis = numberWhere("a positive number of milliseconds", positive);
const days = numberWhere("a positive number of days", positive);
/** A count, bytes or a rate. */
const count = numberWhere("a positive whole number", (value) => Number.isSafeInteger(value) && value > 0);
const port = numberWhere("a port number from 1 to 65535", (value) => Number.isInteger(value) && value >= 1 && value <= 65_535);

/** An http(s) URL without path, query or fragment, kept as its origin (`https://radar.example.com`). */
const publicOrigin = z.string().transform((text, ctx) => {
  let url: URL | null = null;
  try {
    url = new URL(text);
  } catch {
    // reported below
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || url.pathname.replace(/\/$/, "") || url.search || url.hash) {
    ctx.addIssue({ code: "custom", message: `expected the URL people open the dashboard at, like https://radar.example.com, got "${text}"` });
    return z.NEVER;
  }
  return url.origin;
});

/** `loopback` or a comma list of proxy addresses (IPv4 or IPv6). */
const trustedProxies = z.string().transform((text, ctx) => {
  const entries = text.split(",").map((entry) => entry.trim().toLowerCase()).filter(Boolean);
  const bad = entries.find((entry) => entry !== "loopback" && !isIP(entry));
  if (bad !== undefined || entries.length === 0) {
    ctx.addIssue({ code: "custom", message: `expected "loopback" or a comma list of proxy IP addresses, got "${bad ?? text}"` });
    return z.NEVER;
  }
  return entries;
});

/** The stores DATABASE_URL can select, by its scheme. */
export type Store = "sqlite" | "postgres";

/** Which store a DATABASE_URL selects: `file:` is SQLite, `postgres://` or `postgresql://` PostgreSQL; null for anything else. */
export function storeOf(url: string): Store | null {
  if (url.startsWith("file:")) return "sqlite";
  if (/^postgres(ql)?:\/\//i.test(url)) return "postgres";
  return null;
}

const databaseUrl = z.string().refine((url) => storeOf(url) !== null, {
  error: (issue) => `expected a SQLite file URL like file:./data/radar.db or a PostgreSQL URL like postgres://user@host/radar, got "${String(issue.input)}"`,
});

export const CONFIG_SCHEMA = z.object({
  /** Interface the server listens on. */
  HOST: z.string().default("127.0.0.1"),
  PORT: port.default(3000),
  /** Who answers the ingestion, directive, export, health and metrics routes: unset or `lean`, the listener in front of Next; `next`, Next like every other route. */
  RADAR_INGEST_LISTENER: z.enum(["lean", "next"]).optional(),
  /**
   * The store: a SQLite `file:` URL, relative to the working directory (lib/db/config checks the
   * file itself), or a `postgres://` URL (its database migrated at start).
   */
  DATABASE_URL: databaseUrl.default("file:./data/radar.db"),
  /**
   * The address people and agents reach the radar at, when that is not this machine's loopback:
   * requests naming another host are refused, and a non-loopback HOST requires it.
   */
  RADAR_PUBLIC_URL: publicOrigin.optional(),
  /** Whose X-Forwarded-For/-Proto to believe: `loopback` or proxy addresses; unset, nobody's. */
  RADAR_TRUST_PROXY: trustedProxies.optional(),
  /** The first source's ingest token; when unset one is generated and printed once. */
  RADAR_INGEST_TOKEN: z.string().optional(),
  /** How long a stop may stay unacknowledged before the thread is `broken`. */
  RADAR_STOP_GRACE_MS: millis.default(STOP_GRACE_MS),
  /** Replaces every policy's deadline grace; unset, each policy keeps its own. */
  RADAR_POLICY_GRACE_MS: millis.optional(),
  /** A directive delivered but never answered is delivered again after this long. */
  RADAR_REDELIVER_MS: millis.default(15_000),
  /** PostgreSQL, several instances: how often the watchdog's leader checks its hold and standbys try to take over. */
  // At least 250 ms: the leader's checks time out at a few times the lease, and below that a
  // healthy leader's own query would time out and leadership would flap.
  RADAR_WATCHDOG_LEASE_MS: numberWhere("at least 250 milliseconds", (value) => Number.isFinite(value) && value >= 250).default(1_000),
  /** Live streams (GET /api/v1/stream) one client address may hold open: enough for many tabs. */
  RADAR_STREAM_MAX_PER_CLIENT: count.default(16),
  /** Live streams the server holds open in all: bounded against a flood. */
  RADAR_STREAM_MAX_TOTAL: count.default(256),
  /** With RADAR_ADMIN_PASSWORD: the first admin, created at start when missing (unattended deployments). */
  RADAR_ADMIN_EMAIL: z.email({ error: "expected an email address" }).optional(),
  /** The password of RADAR_ADMIN_EMAIL when it is created (never changed afterwards). */
  RADAR_ADMIN_PASSWORD: z.string().min(10, { error: "expected at least 10 characters" }).optional(),
  /** Single sign-on: the OpenID Connect issuer URL (with the client id and secret below). */
  RADAR_OIDC_ISSUER: z.url({ error: "expected the issuer's URL" }).optional(),
  RADAR_OIDC_CLIENT_ID: z.string().optional(),
  RADAR_OIDC_CLIENT_SECRET: z.string().optional(),
  /** The ID-token/userinfo claim whose value(s) give an SSO person's role. */
  RADAR_OIDC_ROLE_CLAIM: z.string().default("groups"),
  /** Comma-separated claim values that make an SSO person an admin. */
  RADAR_OIDC_ADMIN_VALUES: z.string().optional(),
  /** Comma-separated claim values that make an SSO person an operator (otherwise viewer). */
  RADAR_OIDC_OPERATOR_VALUES: z.string().optional(),
  /** A session unused this long ends (hours). */
  RADAR_SESSION_IDLE_HOURS: numberWhere("a positive number of hours", positive).default(12),
  /** A session ends this long after sign-in however much it is used (hours). */
  RADAR_SESSION_MAX_HOURS: numberWhere("a positive number of hours", positive).default(168),
  /** Events per second one source may send, sustained (each request counts at least one). */
  RADAR_SOURCE_EVENTS_PER_SECOND: count.default(20_000),
  /** How many events one source may send at once above its sustained rate. */
  RADAR_SOURCE_EVENTS_BURST: count.default(200_000),
  /** Events one source may store; beyond it ingestion is refused until retention frees room. */
  RADAR_SOURCE_MAX_EVENTS: count.default(20_000_000),
  /** Bytes (raw and normalized payloads) one source may store. */
  RADAR_SOURCE_MAX_BYTES: count.default(20 * 1024 ** 3),
  /** Raw events older than this are pruned once their thread has been quiet as long; episodes stay. */
  RADAR_RETENTION_DAYS: days.default(30),
  /** An incident opens when this many threads get notices of one kind in one scope within the window. */
  RADAR_INCIDENT_MIN_THREADS: count.optional(),
  /** The window those notices must fall in. */
  RADAR_INCIDENT_WINDOW_MS: millis.optional(),
  /** An open incident without a notice for this long closes. */
  RADAR_INCIDENT_QUIET_MS: millis.optional(),
  /** Comma-separated host patterns (`hooks.slack.com`, `*.example.com`) alert webhooks may call; unset, any public host. */
  RADAR_WEBHOOK_ALLOW: z.string().optional(),
  /** Attempts to deliver one alert before it is marked failed. */
  RADAR_ALERT_MAX_ATTEMPTS: count.optional(),
  /** The wait after an alert's first failed delivery; it doubles with each further failure (up to 15 min). */
  RADAR_ALERT_BACKOFF_MS: millis.optional(),
  /** How long one delivery may take before it counts as failed. */
  RADAR_ALERT_TIMEOUT_MS: millis.optional(),
  /** A source is silent after at least this long without a report (and 3 of its usual gaps). */
  RADAR_ALERT_SILENCE_MS: millis.optional(),
  /** A relay that polled for directives and has not for this long stopped polling. */
  RADAR_ALERT_POLL_GAP_MS: millis.optional(),
  /** An alert waiting this long to be delivered means the outbox is backing up. */
  RADAR_ALERT_BACKLOG_MS: millis.optional(),
});

export type Config = z.output<typeof CONFIG_SCHEMA>;

/** Single sign-on, when all three of its settings are given. */
export function oidcSettings(c: Config = config()) {
  if (!c.RADAR_OIDC_ISSUER || !c.RADAR_OIDC_CLIENT_ID || !c.RADAR_OIDC_CLIENT_SECRET) return null;
  const values = (list = "") => list.split(",").map((v) => v.trim()).filter(Boolean);
  return {
    issuer: c.RADAR_OIDC_ISSUER.replace(/\/$/, ""),
    clientId: c.RADAR_OIDC_CLIENT_ID,
    clientSecret: c.RADAR_OIDC_CLIENT_SECRET,
    roleClaim: c.RADAR_OIDC_ROLE_CLAIM,
    adminValues: values(c.RADAR_OIDC_ADMIN_VALUES),
    operatorValues: values(c.RADAR_OIDC_OPERATOR_VALUES),
  };
}

/** Where people reach this server: RADAR_PUBLIC_URL, or this machine's loopback address and port. */
export function publicUrl(c: Config = config()): string {
  return c.RADAR_PUBLIC_URL ?? `http://127.0.0.1:${c.PORT}`;
}
type Environment = Record<string, string | undefined>;

/** Parses the variables the schema names (others are ignored); throws ConfigError on a bad value. */
export function parseConfig(env: Environment): Config {
  const given = Object.fromEntries(Object.keys(CONFIG_SCHEMA.shape).map((name) => [name, env[name] || undefined]));
  const parsed = CONFIG_SCHEMA.safeParse(given);
  if (!parsed.success) throw new ConfigError(`configuration: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/** The live-stream caps in effect. */
export function streamLimits(): { perClient: number; total: number } {
  const c = config();
  return { perClient: c.RADAR_STREAM_MAX_PER_CLIENT, total: c.RADAR_STREAM_MAX_TOTAL };
}

/** The incident detector's thresholds in effect: the detector's defaults unless set. */
export function incidentSettings(c: Config = config()): IncidentSettings {
  const d = DEFAULT_INCIDENT_SETTINGS;
  return { minThreads: c.RADAR_INCIDENT_MIN_THREADS ?? d.minThreads, windowMs: c.RADAR_INCIDENT_WINDOW_MS ?? d.windowMs, quietMs: c.RADAR_INCIDENT_QUIET_MS ?? d.quietMs };
}

/** The alert settings' defaults, used when a variable is unset. */
export const ALERT_DEFAULTS = { maxAttempts: 8, backoffMs: 5_000, maxBackoffMs: 15 * 60_000, timeoutMs: 10_000, silenceMs: 15 * 60_000, pollGapMs: 2 * 60_000, backlogMs: 5 * 60_000 };

/** Alerts: who may be called, how deliveries are retried, and when the radar counts as blind. */
export function alertSettings(c: Config = config()): { allow: string[]; policy: DeliveryPolicy; timeoutMs: number; blind: BlindSettings } {
  const d = ALERT_DEFAULTS;
  return {
    allow: parseHostPatterns(c.RADAR_WEBHOOK_ALLOW),
    policy: { maxAttempts: c.RADAR_ALERT_MAX_ATTEMPTS ?? d.maxAttempts, backoffMs: c.RADAR_ALERT_BACKOFF_MS ?? d.backoffMs, maxBackoffMs: d.maxBackoffMs },
    timeoutMs: c.RADAR_ALERT_TIMEOUT_MS ?? d.timeoutMs,
    blind: {
      silenceFloorMs: c.RADAR_ALERT_SILENCE_MS ?? d.silenceMs,
      silenceFactor: 3,
      pollGapMs: c.RADAR_ALERT_POLL_GAP_MS ?? d.pollGapMs,
      stopGraceMs: c.RADAR_STOP_GRACE_MS,
      backlogMs: c.RADAR_ALERT_BACKLOG_MS ?? d.backlogMs,
    },
  };
}

let cached: Config | null = null;

/** The process's configuration, parsed from the environment on first use. */
export function config(): Config {
  cached ??= parseConfig(process.env);
  return cached;
}

/** Forgets the parsed configuration, so a test can change the environment and parse again. */
export function resetConfig(): void {
  cached = null;
}
