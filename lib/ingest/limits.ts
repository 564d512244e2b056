/**
 * The bounds of ingestion, in one place: a hostile or broken producer costs the server at most
 * this much work per request and per line. README "Limits" lists them for producers.
 */

/** Ingest bodies larger than this are refused with 413 before they are parsed. */
export const MAX_INGEST_BODY_BYTES = 10 * 1024 * 1024;

/** Lines per ingest request (the relay sends 100, the importer 500, OpenTelemetry exporters ~512). */
export const MAX_ITEMS = 5_000;

/** Rejected lines echoed in an ingest response; the rest are only counted. */
export const MAX_REJECTED_ECHO = 100;

/** Objects and arrays nested deeper than this in one line: the line is rejected before anything walks it. */
export const MAX_DEPTH = 64;

/** Ids (thread, turn, event, session) longer than this are refused: an id is never truncated. */
export const MAX_ID_CHARS = 200;

/**
 * Integers a line may carry (attempt, maxAttempts, delayMs, progress count, HTTP status): what
 * both stores hold in an integer column (32-bit signed). A line beyond it is refused.
 */
export const MAX_STORED_INT = 2_147_483_647;

/**
 * Times (epoch ms) a line or a query may carry: the years 0001–9999, which both stores and a JS
 * Date hold and ISO-8601 writes with four digits. Beyond them PostgreSQL's timestamp arithmetic
 * overflows where SQLite would store a number, so the input is refused on both.
 */
/** 0001-01-01T00:00:00Z (Date.UTC reads years 0–99 as 1900–1999). */
export const MIN_STORED_TIME = -62_135_596_800_000;
export const MAX_STORED_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Names (agent, provider, model, policy preset) and short codes. */
export const MAX_NAME_CHARS = 200;

/** Thread titles. */
export const MAX_TITLE_CHARS = 1000;

/** Provider headers kept with one error. */
export const MAX_HEADERS = 100;

/** Any other string in a line (messages, header values, …) is cut to this length and marked. */
export const MAX_STRING_CHARS = 16 * 1024;

/** A line whose JSON is larger than this is stored as a marked, truncated preview. */
export const MAX_RAW_CHARS = 64 * 1024;

/** Capture files uploaded on the Sources page. */
export const MAX_CAPTURE_BYTES = 20 * 1024 * 1024;

/** The import form's whole body: the capture plus the multipart envelope and the source field. */
export const MAX_IMPORT_FORM_BYTES = MAX_CAPTURE_BYTES + 64 * 1024;

/**
 * Values in one OTLP export, counted before it is decoded (otlp-measure.ts): every protobuf
 * field occurrence and element of a packed list, or every JSON array element and object member.
 * Decoding makes about one object a value, so this bounds the work of a small compressed body
 * that inflates to megabytes of tiny values, while leaving room for MAX_ITEMS records many times
 * larger than the agents' (docs/benchmarks.md has what their captures hold).
 */
export const MAX_OTLP_VALUES = 1_000_000;

/** Values within one OTLP record (log record, span, data point) or one resource or scope: its fields, attributes and everything nested in them. */
export const MAX_OTLP_RECORD_VALUES = 10_000;
