import crypto from "node:crypto";
import os from "node:os";
import { config } from "@/lib/config";
import { publishKeys, publishNotice, subscribeKeys, type KeySubscription, type LiveNotice } from "@/lib/db/postgres/live-keys";
import { pool } from "@/lib/db/postgres/pool";
import { currentStore } from "@/lib/db/store";
import { publishResync, receivedDirectivesPending, receivedNotice, receivedThreadChanges, relayTo } from "./bus";

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
 * and a relay waiting elsewhere finds the directive at its next poll. The one listening connection
 * per instance reconnects by itself; what was sent meanwhile is lost, so after a reconnect every
 * browser and long-poll of this instance is told to look again (publishResync).
 */

/** This process among the instances: its own notifications come back to it and are skipped. */
const ORIGIN = `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString("hex")}`;

const globalForInstances = globalThis as unknown as { __radarInstances?: KeySubscription };

const warn = (what: string) => (error: Error) => process.stderr.write(`[radar] live updates across instances: ${what}: ${error.message}\n`);

/** Joins this instance to the others on the database (PostgreSQL only; once per process). */
export function startLiveAcrossInstances(): void {
  if (currentStore() !== "postgres" || globalForInstances.__radarInstances) return;
  const url = config().DATABASE_URL;
  const send = (publication: Promise<void>) => void publication.catch(warn("could not notify the other instances"));
  relayTo({
    threads: (changes) => send(publishKeys(pool(), changes, ORIGIN)),
    notice: (type) => send(publishNotice(pool(), { type }, ORIGIN)),
    directives: (sourceId) => send(publishNotice(pool(), { type: "directives", sourceId }, ORIGIN)),
  });
  globalForInstances.__radarInstances = subscribeKeys(
    url,
    (keys, origin) => {
      if (origin !== ORIGIN) receivedThreadChanges(keys);
    },
    () => publishResync(),
    {
      onNotice: (notice: LiveNotice, origin) => {
        if (origin === ORIGIN) return;
        if (notice.type === "directives") receivedDirectivesPending(notice.sourceId);
        else receivedNotice(notice.type);
      },
      onError: warn("the listening connection failed (it reconnects)"),
    },
  );
}
