import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CONFIG_SCHEMA, config, ConfigError, parseConfig, resetConfig, storeOf } from "./config";

describe("the configuration", () => {
  const redeliver = process.env.RADAR_REDELIVER_MS;
  afterEach(() => {
    if (redeliver === undefined) delete process.env.RADAR_REDELIVER_MS;
    else process.env.RADAR_REDELIVER_MS = redeliver;
    resetConfig();
  });

  it("defaults every variable; an empty one counts as unset", () => {
    const defaults = parseConfig({});
    expect(defaults).toEqual({
      HOST: "127.0.0.1",
      PORT: 3000,
      DATABASE_URL: "file:./data/radar.db",
      RADAR_STOP_GRACE_MS: 60_000,
      RADAR_REDELIVER_MS: 15_000,
      RADAR_WATCHDOG_LEASE_MS: 1_000,
      RADAR_STREAM_MAX_PER_CLIENT: 16,
      RADAR_STREAM_MAX_TOTAL: 256,
      RADAR_OIDC_ROLE_CLAIM: "groups",
      RADAR_SESSION_IDLE_HOURS: 12,
      RADAR_SESSION_MAX_HOURS: 168,
      RADAR_SOURCE_EVENTS_PER_SECOND: 20_000,
      RADAR_SOURCE_EVENTS_BURST: 200_000,
      RADAR_SOURCE_MAX_EVENTS: 20_000_000,
      RADAR_SOURCE_MAX_BYTES: 20 * 1024 ** 3,
      RADAR_RETENTION_DAYS: 30,
    });
    expect(parseConfig({ RADAR_ADMIN_EMAIL: "", RADAR_INGEST_TOKEN: "", PORT: "" })).toEqual(defaults);
  });

  it("reads what is set", () => {
    expect(parseConfig({ PORT: "3917", RADAR_POLICY_GRACE_MS: "2000", RADAR_INGEST_TOKEN: "rr_x", OTHER: "ignored" })).toMatchObject({
      PORT: 3917,
      RADAR_POLICY_GRACE_MS: 2000,
      RADAR_INGEST_TOKEN: "rr_x",
    });
  });

  it.each([
    ["RADAR_STOP_GRACE_MS", "soon", 'configuration: RADAR_STOP_GRACE_MS: expected a positive number of milliseconds, got "soon"'],
    ["RADAR_REDELIVER_MS", "-5", 'configuration: RADAR_REDELIVER_MS: expected a positive number of milliseconds, got "-5"'],
    ["RADAR_WATCHDOG_LEASE_MS", "5", 'configuration: RADAR_WATCHDOG_LEASE_MS: expected at least 250 milliseconds, got "5"'],
    ["PORT", "http", 'configuration: PORT: expected a port number from 1 to 65535, got "http"'],
    ["RADAR_PUBLIC_URL", "radar.example.com", "configuration: RADAR_PUBLIC_URL: expected the URL people open the dashboard at"],
    ["RADAR_PUBLIC_URL", "https://radar.example.com/dashboard", "configuration: RADAR_PUBLIC_URL: expected the URL people open the dashboard at"],
    ["DATABASE_URL", "mysql://db/radar", 'configuration: DATABASE_URL: expected a SQLite file URL like file:./data/radar.db or a PostgreSQL URL like postgres://user@host/radar, got "mysql://db/radar"'],
    ["RADAR_TRUST_PROXY", "loopback, proxy.internal", 'configuration: RADAR_TRUST_PROXY: expected "loopback" or a comma list of proxy IP addresses, got "proxy.internal"'],
  ])("a bad %s (%j) fails with one line naming it", (name, value, message) => {
    expect(() => parseConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => parseConfig({ [name]: value })).toThrow(message);
  });

  it("DATABASE_URL selects the store by its scheme", () => {
    expect(storeOf(parseConfig({}).DATABASE_URL)).toBe("sqlite");
    expect(storeOf(parseConfig({ DATABASE_URL: "postgres://radar@db.internal/radar" }).DATABASE_URL)).toBe("postgres");
    expect(storeOf(parseConfig({ DATABASE_URL: "postgresql://radar@db.internal:5433/radar" }).DATABASE_URL)).toBe("postgres");
    expect(storeOf("./radar.db")).toBeNull();
  });

  it("is parsed once, until a test resets it", () => {
    process.env.RADAR_REDELIVER_MS = "2000";
    resetConfig();
    expect(config().RADAR_REDELIVER_MS).toBe(2000);
    process.env.RADAR_REDELIVER_MS = "1000";
    expect(config().RADAR_REDELIVER_MS).toBe(2000);
    resetConfig();
    expect(config().RADAR_REDELIVER_MS).toBe(1000);
  });
});

describe("the README's Configuration table", () => {
  const readme = readFileSync(path.resolve(import.meta.dirname, "..", "README.md"), "utf8");
  const section = readme.split(/^## /m).find((part) => part.startsWith("Configuration")) ?? "";
  const rows = [...section.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)].map((m) => ({ name: m[1], default: m[2].trim() }));
  const defaults = parseConfig({});

  it("lists exactly the variables the configuration reads", () => {
    expect(rows.map((row) => row.name).sort()).toEqual(Object.keys(CONFIG_SCHEMA.shape).sort());
  });

  it("states each default as the configuration has it", () => {
    for (const row of rows) {
      const value = defaults[row.name as keyof typeof defaults];
      // A variable without a default is described in words ("generated", "each policy's own").
      expect(row.default, row.name).toBe(value === undefined ? row.default.replace(/`/g, "") : `\`${value}\``);
    }
  });
});
