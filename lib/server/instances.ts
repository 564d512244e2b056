import crypto from "node:crypto";
import os from "node:os";
import { config } from "@/lib/config";
import { publishKeys, publishNotice, subscribeKeys, type KeySubscription, type LiveNotice } from "@/lib/db/postgres/live-keys";
import { pool } from "@/lib/db/postgres/pool";
import { currentStore } from "@/lib/db/store";
import { publishResync, receivedDirectivesPending, receivedNotice, receivedPrincipalsChanged, receivedThreadChanges, relayTo } from "./bus";
import { shared } from "@/lib/process-state";

/**
 * Several instances on one PostgreSQL database: what one instance's bus publishes reaches the
 * others' (lib/db/postgres/live-keys.ts, LISTEN/NOTIFY), so a browser on instance B hears of a
 * batch ingested on A and reads the changed rows from the database itself, and a relay
 * long-polling on B wakes when a Stop is pressed on A. On SQLite (one process owns the file)
 * nothing is started.
 *
 * Notifications go out after the unit of work committed, where the bus publishes today (every
 * publisher, the pipeline and the operator's writes alike, already publishes only then), so only
 * saved changes are announced. An instance killed between its commit and its notification
 * announces nothing: other instances' browsers see the change at their next notice or refetch,
 * and a relay waiting elsewhere finds the directive at its next poll; one whose notification fails
 * makes up for it with a resync notice (recoveringPublisher). The one listening connection
 * per instance reconnects by itself; what was sent meanwhile is lost, so after a reconnect every
 * browser and long-poll of this instance is told to look again (publishResync).
 */

/** This process among the instances: its own notifications come back to it and are skipped. */
const ORIGIN = `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString("hex")}`;

const sharedForInstances = shared<{ instances?: KeySubscription }>("instances", () => ({}));

const warn = (what: string) => (error: Error) => process.stderr.write(`[radar] live updates across instances: ${what}: ${error.message}\n`);

/** Joins this instance to the others on the database (PostgreSQL only; once per process). */
export function startLiveAcrossInstances(): void {
  if (currentStore() !== "postgres" || sharedForInstances.instances) return;
  const url = config().DATABASE_URL;
  const send = recoveringPublisher((notice) => publishNotice(pool(), notice, ORIGIN), { onError: warn("could not notify the other instances (they are told to look again once it can)") });
  relayTo({
    threads: (changes) => send(() => publishKeys(pool(), changes, ORIGIN)),
    notice: (type) => send(() => publishNotice(pool(), { type }, ORIGIN)),
    directives: (sourceId) => send(() => publishNotice(pool(), { type: "directives", sourceId }, ORIGIN)),
    principals: (change) => send(() => publishNotice(pool(), { type: "principals", ...change }, ORIGIN)),
  });
  sharedForInstances.instances = subscribeKeys(
    url,
    (keys, origin) => {
      if (origin !== ORIGIN) receivedThreadChanges(keys);
    },
    () => publishResync(),
    {
      onNotice: (notice: LiveNotice, origin) => {
        if (origin === ORIGIN) return;
        if (notice.type === "directives") receivedDirectivesPending(notice.sourceId);
        else if (notice.type === "principals") receivedPrincipalsChanged(notice);
        else if (notice.type === "resync") publishResync();
        else receivedNotice(notice.type);
      },
      onError: warn("the listening connection failed (it reconnects)"),
    },
  );
}

/** The first wait before a failed notification is made up for; it doubles up to RESYNC_MAX_MS. */
export const RESYNC_RETRY_MS = 500;
export const RESYNC_MAX_MS = 10_000;

/**
 * Sends this instance's notifications, making up for those that fail: what failed is not kept (a
 * burst while the database is away would pile up), only that something was lost; a `resync`
 * notice then goes out at the next successful publication or on a retry timer (with backoff),
 * and every other instance tells its browsers and long-polls to look again. Memory stays O(1).
 */
export function recoveringPublisher(
  sendNotice: (notice: LiveNotice) => Promise<void>,
  { onError = () => undefined, retryMs = RESYNC_RETRY_MS, maxRetryMs = RESYNC_MAX_MS }: { onError?: (error: Error) => void; retryMs?: number; maxRetryMs?: number } = {},
): (publication: () => Promise<void>) => void {
  /** Counts failures, so a resync only clears what was lost before it was sent. */
  let lost = 0;
  let recovered = 0;
  let sending = false;
  let timer: NodeJS.Timeout | null = null;
  let backoff = retryMs;

  const failed = (error: Error) => {
    lost++;
    onError(error);
    schedule();
  };

  const schedule = () => {
    if (timer || lost === recovered) return;
    timer = setTimeout(() => {
      timer = null;
      void resync();
    }, backoff);
    timer.unref?.();
    backoff = Math.min(maxRetryMs, backoff * 2);
  };

  const resync = async () => {
    if (sending || lost === recovered) return;
    sending = true;
    const covering = lost;
    try {
      await sendNotice({ type: "resync" });
      recovered = covering;
      if (lost === recovered) backoff = retryMs;
    } catch (error) {
      failed(error as Error);
    } finally {
      sending = false;
      // A failure while this one was on its way is not covered by it.
      schedule();
    }
  };

  return (publication) => {
    publication().then(
      () => void resync(),
      (error: Error) => failed(error),
    );
  };
}