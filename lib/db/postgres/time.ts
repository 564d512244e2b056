/**
 * Times cross the PostgreSQL boundary as epoch milliseconds, as on SQLite: columns are
 * TIMESTAMP(3) in UTC (prisma/postgres/schema.prisma says why), and raw SQL converts with these
 * so callers never see the difference. Both are exact for whole milliseconds.
 */

/** SQL for the TIMESTAMP(3) of an epoch-ms expression (a parameter such as `$1`, or a column). */
export function timestampFromMs(expr: string): string {
  return `(TIMESTAMP 'epoch' + (${expr})::bigint * INTERVAL '1 millisecond')`;
}

/** SQL for the epoch milliseconds (BIGINT) of a TIMESTAMP(3) expression. */
export function msFromTimestamp(expr: string): string {
  return `(EXTRACT(EPOCH FROM ${expr}) * 1000)::bigint`;
}

/** The text of epoch milliseconds as a TIMESTAMP literal (UTC, no zone), for parameters. */
export function timestampText(ms: number): string {
  return new Date(ms).toISOString().slice(0, -1);
}
