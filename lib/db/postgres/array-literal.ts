/**
 * A PostgreSQL array literal (`{…}`) of strings, numbers, booleans and nulls, for an `$n::type[]`
 * parameter. node-postgres builds one itself from a JavaScript array, escaping every element with
 * two regular-expression replaces: for an ingest batch's 500 raw and normalized payloads that was
 * about 2.5 ms of the ingest thread per batch. Here the whole array is written by JSON.stringify,
 * whose output is already a valid array literal between its brackets whenever every string is
 * free of what JSON escapes differently from PostgreSQL — control characters (JSON writes `\n`,
 * PostgreSQL would read `n`) and lone surrogates (`\udXXX`): `"` and `\` are escaped alike by both,
 * and an unquoted `null` is NULL to both. Any other array (or one with NaN or Infinity, which JSON
 * writes as null) is escaped element by element, as node-postgres does.
 */
export type ArrayElement = string | number | boolean | null | undefined;

export function arrayLiteral(values: readonly ArrayElement[]): string {
  let plain = true;
  for (const value of values) {
    // Only what the parameters of lib/db/postgres hold; anything else would be written wrong.
    if (value !== null && value !== undefined && !PLAIN_TYPES.has(typeof value)) throw new TypeError(`an array parameter holds a ${typeof value}, not a string, number, boolean or null`);
    // JSON writes NaN and Infinity as null; node-postgres, as PostgreSQL reads them.
    if (typeof value === "number" ? !Number.isFinite(value) : typeof value === "string" && (CONTROL.test(value) || !value.isWellFormed())) {
      plain = false;
      break;
    }
  }
  if (plain) {
    const json = JSON.stringify(values.map((value) => value ?? null));
    return `{${json.slice(1, -1)}}`;
  }
  return `{${values.map(element).join(",")}}`;
}

const CONTROL = /[\u0000-\u001f]/;
const PLAIN_TYPES = new Set(["string", "number", "boolean"]);

function element(value: ArrayElement): string {
  if (value == null) return "NULL";
  if (typeof value !== "string") return String(value);
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}
