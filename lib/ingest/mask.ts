/**
 * Credentials never reach storage: every viewer can open a raw payload, so a line is masked on
 * the ingest path before anything is persisted. Masked are
 * - values of credential fields and headers (`authorization`, `cookie`, `x-api-key`,
 *   `password`, `*_api_key`, `*_token`… in any case), as object keys and as `name: value` /
 *   `name=value` / `"name": "value"` pairs inside text;
 * - `Bearer <token>` anywhere in text;
 * - well-known key shapes in text (OpenAI, Anthropic, GitHub, AWS, Google, Slack, JWTs, this
 *   product's ingest tokens `rr_…` and API keys `rrk_…`);
 * - the password in a URL (`https://user:••••@host`).
 * A short prefix stays (`sk-ant-…••••`, `Bearer ••••`) so a reviewer sees which kind of
 * credential leaked, never the secret itself.
 *
 * Pure and deterministic (the same input always masks the same way, and masking a masked value
 * changes nothing). Idempotency keys are derived from the line as received, before masking, so
 * a line keeps the key it had before masking existed and a re-sent line is still a duplicate.
 * Copy-on-write: a value with nothing to mask comes back as the very same object.
 */
import type { NormalizedEvent } from "./types";

export const MASK = "••••";

/** Names of credential fields, lower case; `[_-]?` also matches camelCase once case is ignored. */
const CREDENTIAL_NAMES = [
  "authorization",
  "cookie",
  "api[_-]?key",
  "passw(?:or)?d",
  "secret",
  "secret[_-]?access[_-]?key",
  "private[_-]?key",
  "token",
  "(?:access|refresh|auth|id|session|bearer)[_-]?token",
].join("|");

/** Authorization schemes kept in front of the mask. */
const SCHEMES = "bearer|basic|token|digest|negotiate";

/**
 * Key shapes, case-sensitive: the prefix that stays when it is masked, and the rest. Whatever
 * they contain is a credential, wherever it appears.
 */
const KEY_SHAPES: [prefix: string, rest: string][] = [
  ["sk-(?:(?:ant|proj|svcacct|admin)-)?", "[A-Za-z0-9_-]{16,}"],
  ["gh[pousr]_", "[A-Za-z0-9]{20,}"],
  ["github_pat_", "[A-Za-z0-9_]{20,}"],
  ["A(?:KIA|SIA)", "[0-9A-Z]{16}(?![0-9A-Z])"],
  ["AIza", "[0-9A-Za-z_-]{30,}"],
  ["xox[abpr]-", "[0-9A-Za-z-]{10,}"],
  ["eyJ", String.raw`[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`],
  ["rrk?_", "[A-Za-z0-9_-]{16,}"],
];

/** Case-insensitive letters without the `i` flag, which would also loosen the key shapes. */
function anyCase(source: string): string {
  return source.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`);
}

const NOT_AFTER_WORD = String.raw`(?<![\w-])`;
const KEY_NAME = String.raw`((?:[\w-]*?[_-])?(?:${anyCase(CREDENTIAL_NAMES)}))(?![\w-])`;
/** `: `, `=`, `": "` and their JSON-escaped forms (a JSON document inside a string). */
const SEPARATOR = String.raw`(\\?["']?[ \t]*[:=][ \t]*)`;
const QUOTED_VALUE = String.raw`(\\?["'])([^"'\r\n\\]*)`;
const BARE = String.raw`[^\s"'\\,;&)}\]]`;
/** A bare value runs to a delimiter; a cookie's further `; name=value` pairs belong to it. */
const BARE_VALUE = String.raw`((?:${anyCase(SCHEMES)})[ \t]+)?(${BARE}+(?:;[ \t]*[\w.-]+=${BARE}*)*)`;
/** The token is taken whole (a lookahead and its backreference never backtrack), and never a masked one. */
const BEARER = String.raw`(${anyCase("bearer")})[ \t]+(?=(?<token>[A-Za-z0-9._~+/-]{8,}=*))\k<token>(?![…•])`;

/** The password of a URL's user information: `https://user:••••@host`. */
const URL_PASSWORD = String.raw`(:\/\/[^\s/:@]+:)[^\s/@]+(?=@)`;

/** The one pass over a string: a credential pair, a bearer token or a key shape, whichever comes first. */
const SECRETS = new RegExp(
  [
    String.raw`${NOT_AFTER_WORD}${KEY_NAME}${SEPARATOR}(?:${QUOTED_VALUE}|${BARE_VALUE})`,
    `${NOT_AFTER_WORD}${BEARER}`,
    String.raw`(?<![A-Za-z0-9_-])(?:${KEY_SHAPES.map(([prefix, rest]) => prefix + rest).join("|")})`,
    URL_PASSWORD,
  ].join("|"),
  "g",
);
/** A value that is a key of a known shape; the group that matched holds the prefix to keep. */
const KEY_SHAPE = new RegExp(`^(?:${KEY_SHAPES.map(([prefix, rest]) => `(${prefix})${rest}`).join("|")})`);
const SCHEME_VALUE = new RegExp(String.raw`^(${anyCase(SCHEMES)})[ \t]+\S`);
const CREDENTIAL_KEY = new RegExp(String.raw`^(?:[\w-]*[_-])?(?:${CREDENTIAL_NAMES})$`, "i");

/** The shortest string any rule matches (`token=x`): shorter strings are never scanned. */
const MIN_SECRET_CHARS = 7;

/**
 * What every match of SECRETS contains: a pair's or a URL's `:` or `=`, `bearer`, or a key
 * shape's prefix. Most strings (ids, names, plain messages) have none and skip the full scan.
 */
const MAY_HOLD_SECRET = new RegExp(`[:=]|${anyCase("bearer")}|${KEY_SHAPES.map(([prefix]) => prefix).join("|")}`);

/** A credential value as shown: its scheme or key prefix, then the mask. */
export function maskCredential(value: string): string {
  if (value.endsWith(MASK)) return value; // already masked: masking twice changes nothing
  const scheme = SCHEME_VALUE.exec(value);
  if (scheme) return `${scheme[1]} ${maskCredential(value.slice(scheme[0].length - 1))}`;
  const key = KEY_SHAPE.exec(value);
  if (key) return `${key.slice(1).find((prefix) => prefix !== undefined)}…${MASK}`;
  return MASK;
}

/** Masks every credential inside free text; text without one comes back unchanged. */
export function maskText(text: string): string {
  if (text.length < MIN_SECRET_CHARS || !MAY_HOLD_SECRET.test(text)) return text;
  return text.replace(
    SECRETS,
    (match, name?: string, separator?: string, quote?: string, quoted?: string, scheme?: string, bare?: string, bearer?: string, token?: string, user?: string) => {
      // Group numbers: 1 name, 2 separator, 3–4 quoted value, 5–6 bare value, 7–8 bearer token, 9 URL up to the password.
      if (name !== undefined) {
        if (quote !== undefined) return quoted ? `${name}${separator}${quote}${maskCredential(quoted)}` : match;
        return `${name}${separator}${maskCredential(`${scheme ?? ""}${bare}`)}`;
      }
      if (bearer !== undefined) return `${bearer} ${maskCredential(token!)}`;
      if (user !== undefined) return `${user}${MASK}`;
      return maskCredential(match);
    },
  );
}

/** Whether a field or header of this name holds a credential (any case). */
export function isCredentialName(name: string): boolean {
  return CREDENTIAL_KEY.test(name);
}

/** Any JSON value: credential fields masked whole, every other string masked as text. */
export function maskPayload<T>(value: T): T {
  return walk(value, maskText) as T;
}

/** Strings go through `mask`; inside a credential field every string is a credential (a header's list of values). */
function walk(value: unknown, mask: (text: string) => string): unknown {
  if (typeof value === "string") return mask(value);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    value.forEach((item, i) => {
      const masked = walk(item, mask);
      if (masked !== item) (out ??= value.slice())[i] = masked;
    });
    return out ?? value;
  }
  const object = value as Record<string, unknown>;
  let out: Record<string, unknown> | null = null;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const item = object[key];
    const masked = walk(item, isCredentialName(key) ? maskCredential : mask);
    if (masked !== item) (out ??= { ...object })[key] = masked;
  }
  return out ?? value;
}

/**
 * The text an event carries into storage and the engine: title, reason, the error's message,
 * code, headers and details. Ids and numbers are never touched, nor the advice the engine
 * reads (retry-after and rate-limit headers, reset times, "try again in…" text).
 */
export function maskEvent(event: NormalizedEvent): NormalizedEvent {
  const title = maskOptional(event.title);
  const reason = maskOptional(event.reason);
  const error = maskPayload(event.error);
  if (title === event.title && reason === event.reason && error === event.error) return event;
  const out = { ...event };
  if (title !== undefined) out.title = title;
  if (reason !== undefined) out.reason = reason;
  if (error !== undefined) out.error = error;
  return out;
}

function maskOptional<T extends string | null | undefined>(value: T): T {
  return (typeof value === "string" ? maskText(value) : value) as T;
}
