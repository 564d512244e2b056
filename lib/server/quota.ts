import { config } from "@/lib/config";
import { sourceUsage, type SourceRecord } from "@/lib/db/sources";
import { problem, withRetryAfter } from "./http";
import { shared } from "@/lib/process-state";

/**
 * What one source may send and store. A source over its rate gets 429 with `Retry-After` (the
 * radar follows the advice it asks agents to follow); a source whose stored events reach its
 * quota gets 507 until retention frees room or the operator raises the quota. Usage is counted
 * every few seconds (usage.ts), so a source may pass its storage quota by what it sends in that
 * time; the quota is a bound on the disk, not an exact count.
 */

/** Storage frees up only when retention runs (hourly): asking sooner would only be refused again. */
const STORAGE_RETRY_AFTER_S = 3_600;

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Rate buckets live in this process's memory: enough for one server, and they cost the hot path
 * no database work. Several instances behind one address would each allow the full rate; move
 * the buckets into the database when that deployment exists. A restart refills them.
 */
const buckets = shared("rateBuckets", (): Map<string, Bucket> => new Map());

/**
 * Admits one ingestion request of `items` lines from a source, or answers its refusal. A request
 * counts at least one event, so a flood of empty requests is limited too.
 */
export async function admitIngest(source: SourceRecord, items: number, now: number): Promise<Response | null> {
  return takeRate(source, Math.max(1, items), now) ?? (await checkStorage(source, items));
}

/** A token bucket: refilled at the sustained rate, holding at most the burst. */
function takeRate(source: SourceRecord, cost: number, now: number): Response | null {
  const { RADAR_SOURCE_EVENTS_PER_SECOND: rate, RADAR_SOURCE_EVENTS_BURST: burst } = config();
  const bucket = buckets.get(source.id) ?? { tokens: burst, at: now };
  bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * rate);
  bucket.at = now;
  buckets.set(source.id, bucket);
  if (cost <= bucket.tokens) {
    bucket.tokens -= cost;
    return null;
  }
  if (cost > burst) {
    // Never admissible at once however long the source waits: say how to split it.
    return problem(413, "Payload Too Large", `This request carries ${cost} events, more than a source may send at once (RADAR_SOURCE_EVENTS_BURST=${burst}); send smaller batches.`);
  }
  const waitS = Math.max(1, Math.ceil((cost - bucket.tokens) / rate));
  return withRetryAfter(
    problem(
      429,
      "Too Many Requests",
      `Source "${source.name}" is over its rate of ${rate} events per second (burst ${burst}); retry after ${waitS} s. The operator can raise RADAR_SOURCE_EVENTS_PER_SECOND and RADAR_SOURCE_EVENTS_BURST.`,
      { quota: "rate", limit: rate, burst },
    ),
    waitS,
  );
}

async function checkStorage(source: SourceRecord, items: number): Promise<Response | null> {
  const { RADAR_SOURCE_MAX_EVENTS: maxEvents, RADAR_SOURCE_MAX_BYTES: maxBytes, RADAR_RETENTION_DAYS: days } = config();
  const usage = await sourceUsage(source.id);
  const refuse = (quota: "events" | "bytes", stored: number, limit: number, variable: string) =>
    withRetryAfter(
      problem(
        507,
        "Storage quota exceeded",
        `Source "${source.name}" stores ${stored} ${quota === "events" ? "events" : "bytes"}; its quota is ${limit} (${variable}). ` +
          `Raise ${variable}, or lower RADAR_RETENTION_DAYS (now ${days}) so older events are pruned sooner.`,
        { quota, stored, limit },
      ),
      STORAGE_RETRY_AFTER_S,
    );
  if (usage.events + items > maxEvents) return refuse("events", usage.events, maxEvents, "RADAR_SOURCE_MAX_EVENTS");
  if (usage.bytes >= maxBytes) return refuse("bytes", usage.bytes, maxBytes, "RADAR_SOURCE_MAX_BYTES");
  return null;
}

/** Forgets every rate bucket (tests). */
export function resetRateBuckets(): void {
  buckets.clear();
}
