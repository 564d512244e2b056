/**
 * Codex `codexErrorInfo` values: unit variants are strings ("serverOverloaded"), the others
 * single-key objects ({"responseStreamDisconnected":{"httpStatusCode":429}}).
 *
 * RadarEvent.error.code is a string, so an object variant is reported as its variant name
 * (`code: "responseStreamDisconnected"`), its `httpStatusCode` (when not null) becomes
 * `httpStatus`, and the object itself is kept as given in `details.codexErrorInfo`.
 */
import { httpStatusOf, isObject, type JsonObject } from "./util";

export interface CodexErrorInfoParts {
  code: string | null;
  httpStatus: number | null;
  /** The object variant as given (null for string variants). */
  object: JsonObject | null;
}

export function codexErrorInfoParts(info: unknown): CodexErrorInfoParts {
  if (typeof info === "string") return { code: info, httpStatus: null, object: null };
  if (!isObject(info)) return { code: null, httpStatus: null, object: null };
  const keys = Object.keys(info);
  const code = keys.length === 1 ? keys[0] : null;
  let httpStatus: number | null = null;
  for (const key of keys) {
    const inner = info[key];
    if (isObject(inner)) {
      httpStatus = httpStatusOf(inner.httpStatusCode) ?? httpStatusOf(inner.httpStatus);
      if (httpStatus !== null) break;
    }
  }
  return { code, httpStatus, object: info };
}
