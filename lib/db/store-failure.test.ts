import { describe, expect, it } from "vitest";
import { isStoreFailure } from "./store-failure";

const withCode = (code: string) => Object.assign(new Error("x"), { code });

describe("isStoreFailure", () => {
  it.each([
    ["SQLite disk full", withCode("SQLITE_FULL"), true],
    ["SQLite I/O", withCode("SQLITE_IOERR_WRITE"), true],
    ["SQLite busy", withCode("SQLITE_BUSY"), true],
    ["SQLite constraint: the data, not the store", withCode("SQLITE_CONSTRAINT_UNIQUE"), false],
    ["SQLite type mismatch: the data, not the store", withCode("SQLITE_MISMATCH"), false],
    ["PostgreSQL connection failure", withCode("08006"), true],
    ["PostgreSQL cannot connect", withCode("08001"), true],
    ["PostgreSQL deadlock", withCode("40P01"), true],
    ["PostgreSQL serialization failure", withCode("40001"), true],
    ["PostgreSQL disk full", withCode("53100"), true],
    ["PostgreSQL too many connections", withCode("53300"), true],
    ["PostgreSQL admin shutdown", withCode("57P01"), true],
    ["PostgreSQL cannot connect now", withCode("57P03"), true],
    ["PostgreSQL I/O error", withCode("58030"), true],
    ["PostgreSQL data corrupted", withCode("XX001"), true],
    ["connection refused", withCode("ECONNREFUSED"), true],
    ["connection reset", withCode("ECONNRESET"), true],
    ["node-postgres lost its connection", new Error("Connection terminated unexpectedly"), true],
    ["node-postgres pool timeout", new Error("timeout exceeded when trying to connect"), true],
    ["PostgreSQL unique violation (the data)", withCode("23505"), false],
    ["PostgreSQL invalid input (the data)", withCode("22P02"), false],
    ["PostgreSQL query canceled by the caller", withCode("57014"), false],
    ["PostgreSQL syntax error (a bug)", withCode("42601"), false],
    ["a thread's own bug", new TypeError("cannot read properties of undefined"), false],
    ["another code", withCode("ERR_INVALID_ARG_TYPE"), false],
    ["not an error", "SQLITE_FULL", false],
    ["null", null, false],
  ])("%s", (_, error, expected) => {
    expect(isStoreFailure(error)).toBe(expected);
  });
});
