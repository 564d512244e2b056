import type { EventPage, EventView } from "@/lib/wire/types";

/** A thread's events as the thread page reads them, on either store: times in epoch ms. */

/** The columns kept as they are stored; times, flags and the sequence are converted. */
type PlainColumns = "type" | "nativeType" | "format" | "count" | "turnId" | "attempt" | "maxAttempts" | "delayMs" | "kind" | "httpStatus" | "code" | "message";

export interface PageRow extends Pick<EventView, PlainColumns> {
  id: number;
  at: number;
  receivedAt: number;
  lastAt: number | null;
  late: number | boolean;
  clampedFrom: number | null;
  raw?: string;
}

const isoOrNull = (ms: number | null) => (ms == null ? null : new Date(ms).toISOString());

export function toEventView({ id, at, receivedAt, lastAt, late, clampedFrom, raw, ...plain }: PageRow): EventView {
  return {
    seq: id,
    ...plain,
    at: new Date(at).toISOString(),
    receivedAt: new Date(receivedAt).toISOString(),
    lastAt: isoOrNull(lastAt),
    late: Boolean(late),
    clampedFrom: isoOrNull(clampedFrom),
    ...(raw === undefined ? {} : { raw: JSON.parse(raw) as unknown }),
  };
}

/** A page from `limit + 1` rows read newest first: the extra row only says there are earlier ones. */
export function toEventPage(rows: PageRow[], limit: number): EventPage {
  const page = rows.slice(0, limit);
  return { events: page.map(toEventView), earlier: rows.length > limit ? page[page.length - 1].id : null };
}
