/**
 * Credentials never reach storage: every viewer can open a raw payload, so a line is masked on
 * the ingest path before anything is persisted. Masked are
 * - values of credential fields and headers, a name counting by its words whatever its case
 *   style, with the credential word last (`authorization`, `cookie`, `clientSecret`,
 *   `DB_PASSWORD`, `DB_PWD`, `githubToken`, `x-api-key`, `X-Auth-*`), as object keys, as the
 *   value of a name/value pair naming one (`{"name": "api_key", "value": …}`,
 *   `[["Authorization", …]]`) and as `name: value` / `name=value` / `"name": "value"` /
 *   `"name": ["value", …]` pairs inside text, the name also of two words (`API key: …`); a
 *   quoted value whole, to its own closing quote, escapes and JSON inside a string included;
 * - URL query and fragment values of such names and of `key`, `sig`, `signature`, `code`, `auth`,
 *   also after an escaped separator (`&amp;`, `\u0026`);
 * - `Bearer <token>` anywhere in text;
 * - well-known key shapes in text (OpenAI, Anthropic, GitHub, GitLab, AWS, Google, Slack,
 *   Stripe, npm, Hugging Face, JWTs, this product's ingest tokens `rr_…` and API keys `rrk_…`),
 *   and the secret last segment of Slack and Discord webhook URLs;
 * - the password in a URL (`https://user:••••@host`), up to the authority's last `@`.
 * Linear in the text's length: no rule backtracks over what another already read.
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

/**
 * A name holds a credential when its last word is one of these (`clientSecret`, `GITHUB_TOKEN`,
 * `db.password`), or its last two words end in a credential key (`anthropicApiKey`). Only the
 * last word counts, so usage counts (`input_tokens`, `input_token_count`, `max_tokens`) and names
 * that only mention a credential (`auth.header_name`, `apiKeySource`) stay readable. The joined
 * forms (`apikey`, `accesstoken`) are names written in one word.
 */
const CREDENTIAL_WORDS = new Set([
  "authorization",
  "cookie",
  "password",
  "passwd",
  "passphrase",
  "secret",
  "token",
  "credential",
  "credentials",
  "apikey",
  "accesstoken",
  "refreshtoken",
  "authtoken",
  "idtoken",
  "sessiontoken",
  "bearertoken",
  "clientsecret",
  "privatekey",
  "secretkey",
]);
/**
 * A last word that is a credential only after another word of the same name (`DB_PWD`,
 * `MYSQL_PWD`, `dbPwd`): alone, `PWD` is the shell's working directory, which stays readable.
 */
const QUALIFIED_WORDS = new Set(["pwd"]);
/** The word before a last word `key` that makes it a credential (`x-api-key`, `Ocp-Apim-Subscription-Key`). */
const KEY_KINDS = new Set(["api", "private", "secret", "access", "signing", "encryption", "master", "auth", "subscription"]);
/** Last words that hold a credential only as a URL's query or fragment parameter (`?key=`, `&sig=`, `?code=`). */
const QUERY_WORDS = new Set(["key", "sig", "signature", "code", "auth"]);
/** The names of a name/value pair's two fields (`{"name": "api_key", "value": …}`), lower case. */
const PAIR_NAMES = new Set(["name", "key"]);
const PAIR_VALUES = new Set(["value", "values"]);

/** Authorization schemes kept in front of the mask. */
const SCHEMES = "bearer|basic|token|digest|negotiate";

/**
 * Key shapes, case-sensitive: the prefix that stays when it is masked, and the rest. Whatever
 * they contain is a credential, wherever it appears.
 */
const KEY_SHAPES: [prefix: string, rest: string][] = [
  ["sk-(?:(?:ant|proj|svcacct|admin)-)?", "[A-Za-z0-9_-]{16,}"],
  ["[sr]k_(?:live|test)_", "[A-Za-z0-9]{16,}"],
  ["gh[pousr]_", "[A-Za-z0-9]{20,}"],
  ["github_pat_", "[A-Za-z0-9_]{20,}"],
  ["glpat-", "[A-Za-z0-9_-]{20,}"],
  ["npm_", "[A-Za-z0-9]{36}(?![A-Za-z0-9])"],
  ["hf_", "[A-Za-z0-9]{30,}"],
  ["A(?:KIA|SIA)", "[0-9A-Z]{16}(?![0-9A-Z])"],
  ["AIza", "[0-9A-Za-z_-]{30,}"],
  ["xox[abpre]-", "[0-9A-Za-z-]{10,}"],
  ["xapp-", "[0-9A-Za-z-]{10,}"],
  ["eyJ", String.raw`[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`],
  ["rrk?_", "[A-Za-z0-9_-]{16,}"],
  // Webhook URLs whose last path segment is the secret: the workspace and channel ids stay.
  [String.raw`hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/`, "[A-Za-z0-9]{16,}"],
  [String.raw`(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d+/`, "[A-Za-z0-9_-]{20,}"],
];

/** Case-insensitive letters without the `i` flag, which would also loosen the key shapes. */
function anyCase(source: string): string {
  return source.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`);
}

/** A backslash not itself escaped, and the letters after one that make a JSON escape (`\n`, `\u0026`). */
const UNESCAPED_BACKSLASH = String.raw`(?<!\\)\\`;
const ESCAPE_LETTERS = String.raw`(?:[nrtbf]|u[0-9a-fA-F]{4})`;
/**
 * Where a word of these characters starts: not right after another, but after an escape in
 * JSON logged inside a string (`\ntoken=`, `\u0026key=`).
 */
function wordStart(chars: string): string {
  return String.raw`(?<![${chars}](?<!${UNESCAPED_BACKSLASH}${ESCAPE_LETTERS}))`;
}

/**
 * Any name, of one word or two (`API key`); whether it holds a credential is decided by its
 * words (isCredentialName), not here. Only the last two words of a name ever count, so a third
 * is never read. A name never starts at an escape's letter (`n` of `\ntoken`, so `\nPWD=` is `PWD`).
 */
const NAME = String.raw`${wordStart(String.raw`\w.\-`)}(?!(?<=${UNESCAPED_BACKSLASH})${ESCAPE_LETTERS})([\w.-]+(?: [\w.-]+)?)`;
/** `: `, `=`, `": "` and their JSON-escaped forms (a JSON document inside a string). */
const SEPARATOR = String.raw`(\\?["']?[ \t]*[:=][ \t]*)`;
/** A quoted name: names hold no quote or backslash, so it ends at the first. */
const QUOTED_NAME = String.raw`(\\?["'])([^"'\r\n\\]*)`;
/** The opening quote of a value, plain or JSON-escaped (`\"`), or of a list of values (`[`). */
const OPENING = /\[[ \t]*|\\?["']/y;
/**
 * A quoted value's longest read. Any credential, a PEM key included, is far shorter; an unclosed
 * quote masks this much and the rest is scanned as text.
 */
const MAX_QUOTED_CHARS = 8192;
/**
 * A quoted value's characters, after its opening quote, up to its own closing quote: the other
 * quote character and escapes belong to it (`"don't"`, `"a\"b"`). After a JSON-escaped quote
 * (JSON inside a string) the value's own escapes are escaped once more (`\"a\\\"b\\\\c\"`).
 * Nothing follows the repetition, so it never backtracks.
 */
const QUOTED_CHARS = new Map(
  ["'", '"'].flatMap((quote) => {
    const plain = String.raw`[^${quote}\\\r\n]`;
    const escape = String.raw`\\[^\r\n]`;
    return [
      [quote, new RegExp(String.raw`(?:${plain}|${escape}){0,${MAX_QUOTED_CHARS}}`, "y")],
      [`\\${quote}`, new RegExp(String.raw`(?:${plain}|\\[^${quote}\\\r\n]|\\\\(?:${plain}|${escape})){0,${MAX_QUOTED_CHARS}}`, "y")],
    ] as const;
  }),
);
/** Between two quoted values of a list: `", "`. */
const LIST_SEPARATOR = /[ \t]*,[ \t]*/y;
const BARE = String.raw`[^\s"'\\,;&)}\]]`;
/** A bare value runs to a delimiter, and is never an object (`{`); a cookie's further `; name=value` pairs belong to it. */
const BARE_VALUE = String.raw`((?:${anyCase(SCHEMES)})[ \t]+)?((?!\{)${BARE}+(?:;[ \t]*[\w.-]+=${BARE}*)*)`;
/** An unquoted value after a credential's name and separator, read only once the name is known to be one. */
const BARE_VALUE_AT = new RegExp(BARE_VALUE, "y");
/**
 * A logged pair's name field, quoted: a read from one quote stops at the next, so no text is read
 * again from each `name=`/`key:` before it (a bare value would run on to its end each time).
 */
const PAIR_NAME = new RegExp(QUOTED_NAME, "y");
/** After a pair's name field (`"name": "api_key`): the rest of its quote, then its value field's name (`", "value": `). */
const PAIR_VALUE = new RegExp(String.raw`\\?["'][ \t]*,[ \t]*\\?["']?${anyCase("value")}s?\\?["']?[ \t]*:[ \t]*`, "y");
/** The token is taken whole (a lookahead and its backreference never backtrack), and never a masked one. */
const BEARER = String.raw`(${anyCase("bearer")})[ \t]+(?=(?<token>[A-Za-z0-9._~+/-]{8,}=*))\k<token>(?![…•])`;

/**
 * The password of a URL's user information: `https://user:••••@host`. As URL parsers do, the
 * authority runs to the first `/`, `?` or `#`, the user to the first `:` and the password to
 * the last `@` (`user:p@ss@host`); the read stops at the authority's end, so it is linear.
 */
const URL_PASSWORD = String.raw`(:\/\/[^\s/?#:]+:)[^\s/?#]+(?=@)`;

/**
 * The one pass over a string: a key shape, a bearer token, a name and its separator, or a URL's
 * password, whichever comes first. Key shapes come first, so a key followed by `:` is a key.
 * A name matches without its value: the value is read (VALUE) only after a credential's name,
 * and any other name's value is scanned as text, so every character is read a bounded number
 * of times.
 */
const SECRETS = new RegExp(
  [
    String.raw`${wordStart(String.raw`A-Za-z0-9_\-`)}(?:${KEY_SHAPES.map(([prefix, rest]) => prefix + rest).join("|")})`,
    String.raw`${wordStart(String.raw`\w\-`)}${BEARER}`,
    `${NAME}${SEPARATOR}`,
    URL_PASSWORD,
  ].join("|"),
  "g",
);
/** A value that is a key of a known shape; the group that matched holds the prefix to keep. */
const KEY_SHAPE = new RegExp(`^(?:${KEY_SHAPES.map(([prefix, rest]) => `(${prefix})${rest}`).join("|")})`);
const SCHEME_VALUE = new RegExp(String.raw`^(${anyCase(SCHEMES)})[ \t]+\S`);

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
  let out = "";
  let done = 0;
  SECRETS.lastIndex = 0;
  for (let match = SECRETS.exec(text); match; match = SECRETS.exec(text)) {
    // Group numbers: 1 bearer, 2 its token, 3 name, 4 separator, 5 URL up to the password.
    const [whole, bearer, token, name, separator, user] = match;
    let masked: string;
    let end = match.index + whole.length;
    if (name !== undefined) {
      const pair = maskPair(text, match.index, name, separator!);
      if (!pair) {
        // Not a credential's name: what follows it is text like any other (a URL's `://` too).
        SECRETS.lastIndex = match.index + name.length;
        continue;
      }
      [masked, end] = pair;
    } else if (bearer !== undefined) masked = `${bearer} ${maskCredential(token!)}`;
    else if (user !== undefined) masked = `${user}${MASK}`;
    else masked = maskCredential(whole);
    out += text.slice(done, match.index) + masked;
    done = SECRETS.lastIndex = end;
  }
  return done === 0 ? text : out + text.slice(done);
}

/**
 * A name and separator at `start`: null when the name holds no credential here; else the pair
 * with its value masked, and where it ends. A URL's query or fragment also hides `key`, `sig`,
 * `code`…; a logged pair (`"name": "api_key", "value": "…"`) hides its value field.
 */
function maskPair(text: string, start: number, name: string, separator: string): [masked: string, end: number] | null {
  const head = `${name}${separator}`;
  const logged = PAIR_NAMES.has(name.slice(name.lastIndexOf(" ") + 1).toLowerCase()) ? maskLoggedPair(text, head, start + head.length) : null;
  if (logged) return logged;
  const inQuery = separator === "=" && !name.includes(" ") && QUERY_SEPARATORS.test(text.slice(Math.max(0, start - 6), start));
  if (!isCredentialName(name) && !(inQuery && QUERY_WORDS.has(lastWord(name)))) return null;
  const value = maskValue(text, start + head.length);
  return value && [`${head}${value[0]}`, value[1]];
}

/** What ends the text before a URL's query or fragment parameter: `?`, `&`, `#`, or `&` escaped for HTML or JSON. */
const QUERY_SEPARATORS = /(?:[?&#]|&amp;|&#38;|\\u0026)$/i;

/**
 * A credential's value at `from`, masked, and where it ends; null when none starts there. A
 * quoted value runs to its own closing quote (which stays, with the rest, for the scan); a list
 * masks each of its quoted values; a bare value runs to a delimiter.
 */
function maskValue(text: string, from: number): [masked: string, end: number] | null {
  OPENING.lastIndex = from;
  const opening = OPENING.exec(text)?.[0];
  if (opening === undefined) {
    BARE_VALUE_AT.lastIndex = from;
    const bare = BARE_VALUE_AT.exec(text);
    return bare && [maskCredential(`${bare[1] ?? ""}${bare[2]}`), BARE_VALUE_AT.lastIndex];
  }
  if (!opening.startsWith("[")) return maskQuoted(text, opening, from + opening.length);
  // A list: `["a", "b"]`, each value masked; its closing `]` is scanned as text.
  let masked = opening;
  let at = from + opening.length;
  for (;;) {
    OPENING.lastIndex = at;
    const quote = OPENING.exec(text)?.[0];
    if (quote === undefined || quote.startsWith("[")) return masked === opening ? null : [masked, at];
    const [value, end] = maskQuoted(text, quote, at + quote.length);
    masked += value;
    LIST_SEPARATOR.lastIndex = end + quote.length;
    if (!text.startsWith(quote, end) || !LIST_SEPARATOR.exec(text)) return [masked, end];
    masked += text.slice(end, LIST_SEPARATOR.lastIndex);
    at = LIST_SEPARATOR.lastIndex;
  }
}

/** A quoted value whose opening quote ends at `from`: the quote, the value masked (an empty one kept), and where the value ends. */
function maskQuoted(text: string, quote: string, from: number): [masked: string, end: number] {
  const chars = QUOTED_CHARS.get(quote)!;
  chars.lastIndex = from;
  const value = chars.exec(text)![0];
  return [`${quote}${value && maskCredential(value)}`, chars.lastIndex];
}

/** A logged pair whose quoted name field starts at `from`: its value field masked when it names a credential. */
function maskLoggedPair(text: string, head: string, from: number): [masked: string, end: number] | null {
  PAIR_NAME.lastIndex = from;
  const value = PAIR_NAME.exec(text);
  if (!value || !isCredentialName(value[2])) return null;
  PAIR_VALUE.lastIndex = PAIR_NAME.lastIndex;
  const field = PAIR_VALUE.exec(text);
  const masked = field && maskValue(text, PAIR_VALUE.lastIndex);
  if (!masked) return null;
  return [`${head}${value[0]}${field[0]}${masked[0]}`, masked[1]];
}

/**
 * Names repeat across every payload (field names, OTLP attribute keys), and splitting one into
 * words is most of masking's cost, so answers are remembered; the memory is bounded by clearing.
 */
const credentialNames = new Map<string, boolean>();
const CREDENTIAL_NAMES_KEPT = 10_000;

/** Whether a field or header of this name holds a credential, whatever its case style (module header). */
export function isCredentialName(name: string): boolean {
  let known = credentialNames.get(name);
  if (known === undefined) {
    if (credentialNames.size >= CREDENTIAL_NAMES_KEPT) credentialNames.clear();
    credentialNames.set(name, (known = judgeName(name)));
  }
  return known;
}

function judgeName(name: string): boolean {
  const words = nameWords(name);
  const last = words.at(-1);
  if (last === undefined) return false;
  if (CREDENTIAL_WORDS.has(last)) return true;
  if (QUALIFIED_WORDS.has(last)) return nameWords(name.slice(name.lastIndexOf(" ") + 1)).length > 1; // `DB_PWD`, not `cd /tmp PWD`
  if (last === "key" && KEY_KINDS.has(words.at(-2) ?? "")) return true;
  return words[0] === "x" && words[1] === "auth"; // X-Auth-Token, X-Auth-Key, X-Auth-User…
}

/** A name's words, lower case: camelCase and PascalCase split, then `_`, `-`, `.` and any other separator. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z])(?=[A-Z][a-z])/g, "$1 ")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== "");
}

function lastWord(name: string): string {
  return nameWords(name).at(-1) ?? "";
}

/** Any JSON value: credential fields masked whole, every other string masked as text. */
export function maskPayload<T>(value: T): T {
  return walk(value, maskText) as T;
}

/**
 * Strings go through `mask`; inside a credential field every string is a credential (a header's
 * list of values). So is the value of a name/value pair that names one (`{"name": "api_key",
 * "value": …}`, an OTLP attribute) and the second of a header pair in a list (`[["Authorization", …]]`).
 */
function walk(value: unknown, mask: (text: string) => string): unknown {
  if (typeof value === "string") return mask(value);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    value.forEach((item, i) => {
      const masked = isCredentialPair(item) ? walkPair(item) : walk(item, mask);
      if (masked !== item) (out ??= value.slice())[i] = masked;
    });
    return out ?? value;
  }
  const object = value as Record<string, unknown>;
  const namesCredential = pairNamesCredential(object);
  let out: Record<string, unknown> | null = null;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const item = object[key];
    const credential = isCredentialName(key) || (namesCredential && PAIR_VALUES.has(key.toLowerCase()));
    const masked = walk(item, credential ? maskCredential : mask);
    if (masked !== item) (out ??= { ...object })[key] = masked;
  }
  return out ?? value;
}

/** `[name, value]` where the name is a credential's. */
function isCredentialPair(item: unknown): item is [string, unknown] {
  return Array.isArray(item) && item.length === 2 && typeof item[0] === "string" && isCredentialName(item[0]);
}

function walkPair(pair: [string, unknown]): [string, unknown] {
  const masked = walk(pair[1], maskCredential);
  return masked === pair[1] ? pair : [pair[0], masked];
}

/** Whether an object's name field (`name`, `key`, any case) names a credential. */
function pairNamesCredential(object: Record<string, unknown>): boolean {
  for (const key in object) {
    const name = object[key];
    // The length test first: it spares lower-casing every other key of every object.
    if (typeof name === "string" && key.length <= 4 && PAIR_NAMES.has(key.toLowerCase()) && Object.hasOwn(object, key) && isCredentialName(name)) return true;
  }
  return false;
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
