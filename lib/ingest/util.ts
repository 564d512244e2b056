/** Small pure helpers shared by the adapters. */

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

export function nonEmptyStr(value: unknown): string | null {
  return typeof value === "string" && value.length > 0 ? value : null;
}

export function finiteNum(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** An HTTP status as an integer 100–599, else null (never clamped). */
export function httpStatusOf(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value >= 100 && value <= 599 ? value : null;
}

/** A non-negative integer, else null. */
export function countOf(value: unknown): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
}
