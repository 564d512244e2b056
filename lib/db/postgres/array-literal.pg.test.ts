import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freshDatabase } from "@/scripts/lib/postgres";
import { arrayLiteral } from "./array-literal";

/**
 * arrayLiteral's output, read by PostgreSQL as an array parameter, gives back every element as it
 * was: the same array node-postgres's own escaping gives, for the strings JSON writes differently
 * from PostgreSQL too.
 */
let client: pg.Client;
beforeAll(async () => {
  client = new pg.Client({ connectionString: await freshDatabase(inject("postgresUrl"), "array_literal") });
  await client.connect();
});
afterAll(() => client.end());

const read = async (literal: unknown, type: string) => (await client.query<{ a: unknown[] }>(`SELECT $1::${type}[] AS a`, [literal])).rows[0].a;

describe("arrayLiteral", () => {
  it.each<[string, (string | null)[]]>([
    ["plain strings", ["a", "b c", ""]],
    ["nulls, and the word NULL as a string", [null, "NULL", "null", undefined as unknown as null]],
    ["quotes, backslashes, braces and commas", ['say "hi"', "C:\\path\\", "{a,b}", "a,b", "\\\"", " lead and trail "]],
    ["JSON text, escapes included", [JSON.stringify({ message: 'line 1\nline "2"\t\\end', path: "C:\\x" }), JSON.stringify(["\u0001", "é", "😀"])]],
    ["a newline, a tab and a carriage return (escaped element by element)", ["a\nb", "tab\there", "cr\r"]],
    ["other control characters", ["\u0001\u001f", "bell\u0007"]],
    ["non-ASCII: accents, CJK, emoji, a lone surrogate", ["é", "漢字", "😀 pair", "lone \ud800 half"]],
    ["an empty array", []],
  ])("%s", async (_, values) => {
    const expected = values.map((value) => (value === undefined ? null : value === "lone \ud800 half" ? "lone \ufffd half" : value));
    const viaLiteral = await read(arrayLiteral(values), "text");
    const viaDriver = await read(values, "text");
    expect(viaLiteral).toEqual(viaDriver);
    expect(viaLiteral).toEqual(expected);
  });

  it.each<[string, string, (number | null)[]]>([
    ["integers and nulls", "int", [1, -2, 0, null, 2147483647]],
    ["bigints within a double's exact range", "bigint", [5_000_000_001, 9_007_199_254_740_991]],
    ["fractions", "float8", [1.5, 1796106180023.25, 1e21, -0.000001]],
    ["NaN and infinities (escaped element by element)", "float8", [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1]],
  ])("%s", async (_, type, values) => {
    const viaLiteral = await read(arrayLiteral(values), type);
    expect(viaLiteral).toEqual(await read(values, type));
    expect(viaLiteral.map(Number).map((n, i) => (values[i] === null ? null : n))).toEqual(values);
  });

  it("refuses what no parameter here holds (an object, a Date, a bigint) instead of writing it wrong", () => {
    for (const value of [{ a: 1 }, new Date(0), 1n, ["nested"]]) {
      expect(() => arrayLiteral(["ok", value as unknown as string])).toThrow(/an array parameter holds a (object|bigint)/);
    }
  });

  it("takes the fast path only where JSON and PostgreSQL agree", () => {
    expect(arrayLiteral(["a", null, 'b"c'])).toBe('{"a",null,"b\\"c"}');
    expect(arrayLiteral([1, null, 2.5])).toBe("{1,null,2.5}");
    expect(arrayLiteral(["a\nb"])).toBe('{"a\nb"}');
    expect(arrayLiteral([Number.NaN])).toBe("{NaN}");
  });
});
