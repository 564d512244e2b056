/**
 * The canonical event's hot path: a hand-written check in front of the zod schema
 * (canonical.ts). It accepts only events the schema accepts, answering the same fields; anything
 * it is not sure of (a bad field, a custom policy object, a codexErrorInfo code) goes to the
 * schema, which names the problem. canonical-check.test.ts keeps the two equivalent.
 */
import { EVENT_TYPES } from "../retry/types";
import { MAX_HEADERS, MAX_ID_CHARS, MAX_NAME_CHARS, MAX_TITLE_CHARS } from "./limits";
import { isObject, type JsonObject } from "./util";

const TYPES: ReadonlySet<unknown> = new Set(EVENT_TYPES);

const absent = (value: unknown) => value === undefined || value === null;
const id = (value: unknown) => typeof value === "string" && value.length >= 1 && value.length <= MAX_ID_CHARS;
const text = (value: unknown, max = MAX_NAME_CHARS) => absent(value) || (typeof value === "string" && value.length <= max);
const int = (value: unknown, min: number, max = Number.MAX_SAFE_INTEGER) =>
  absent(value) || (typeof value === "number" && Number.isSafeInteger(value) && value >= min && value <= max);
const finite = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);

function errorOk(error: unknown): boolean {
  if (absent(error)) return true;
  if (!isObject(error)) return false;
  const { httpStatus, code, message, retryAfter, headers } = error;
  if (!int(httpStatus, 100, 599) || !text(code) || !(absent(message) || typeof message === "string")) return false;
  if (!(absent(retryAfter) || typeof retryAfter === "string" || finite(retryAfter))) return false;
  if (absent(headers)) return true;
  if (!isObject(headers)) return false;
  let count = 0;
  for (const name in headers) {
    if (!Object.hasOwn(headers, name)) continue;
    if (typeof headers[name] !== "string" || ++count > MAX_HEADERS) return false;
  }
  return true;
}

/**
 * Whether the schema would accept the item with every known field unchanged (so the item itself
 * is the parsed event); false when the schema must decide.
 */
export function isPlainCanonicalEvent(item: JsonObject): boolean {
  const { at, policy, delayMs, retryMs } = item;
  return (
    id(item.threadId) &&
    TYPES.has(item.type) &&
    (item.id === undefined || id(item.id)) &&
    (absent(item.turnId) || id(item.turnId)) &&
    (absent(item.parentThreadId) || id(item.parentThreadId)) &&
    (at === undefined || typeof at === "string" || finite(at)) &&
    text(item.agent) &&
    text(item.provider) &&
    text(item.model) &&
    text(item.title, MAX_TITLE_CHARS) &&
    (absent(policy) || (typeof policy === "string" && policy.length >= 1 && policy.length <= MAX_NAME_CHARS)) &&
    int(item.attempt, 0) &&
    int(item.maxAttempts, 1) &&
    (absent(delayMs) || (finite(delayMs) && delayMs >= 0)) &&
    (absent(item.willRetry) || typeof item.willRetry === "boolean") &&
    int(item.attemptsMade, 1) &&
    (absent(retryMs) || (finite(retryMs) && retryMs >= 0)) &&
    int(item.progressCount, 1) &&
    errorOk(item.error)
  );
}
