import type { ThreadState } from "@/lib/retry/types";
import { EVENT_PAGE_SIZE, type ThreadDetail, type ThreadView } from "@/lib/wire/types";
import { threadEventPage } from "./events";
import { windowsBlocking } from "./limits";
import { mergedEvents, threadInclude, toThreadDetail, toThreadView } from "./records/threads";
import { storePrisma } from "./store-prisma";
import { parseState } from "./thread-state";

/**
 * One thread for its page, on either store: its rows through the store's Prisma client and the
 * event page and usage windows through their modules; `otherPaths` names the paths joined to it
 * (lib/db/thread-join.ts), read the store's own way.
 */
export async function threadDetailThrough(otherPaths: (views: ThreadView[]) => Promise<ThreadView[]>, key: number, now: number): Promise<ThreadDetail | null> {
  const { prisma } = storePrisma();
  const row = await prisma.thread.findUnique({ where: { id: key }, include: threadInclude });
  if (!row) return null;
  const [episodes, events, directives, children, parent, limits, joinedTo] = await Promise.all([
    prisma.episode.findMany({ where: { threadId: key }, include: { attempts: { orderBy: { n: "asc" } } }, orderBy: { seq: "asc" } }),
    threadEventPage(key, { limit: EVENT_PAGE_SIZE }),
    prisma.directive.findMany({ where: { threadId: key }, orderBy: { createdAt: "asc" } }),
    prisma.thread.findMany({ where: { sourceId: row.sourceId, parentExternalId: row.externalId }, include: threadInclude, orderBy: { createdAt: "asc" } }),
    row.parentExternalId
      ? prisma.thread.findUnique({ where: { sourceId_externalId: { sourceId: row.sourceId, externalId: row.parentExternalId } }, include: threadInclude })
      : null,
    windowsBlocking(key, now),
    row.joinedTo === null ? null : prisma.thread.findUnique({ where: { id: row.joinedTo }, include: threadInclude }),
  ]);
  const [thread] = await otherPaths([toThreadView(row, now)]);
  const joinedEvents = (await Promise.all(thread.alsoReportedBy.map((other) => threadEventPage(other.key, { limit: EVENT_PAGE_SIZE })))).flatMap((page) => page.events);
  return toThreadDetail({
    thread,
    parent: parent ? toThreadView(parent, now) : null,
    children: children.map((child) => toThreadView(child, now)),
    episodes,
    events: mergedEvents(events.events, joinedEvents),
    earlierEvents: events.earlier,
    directives,
    state: parseState(row.state) as ThreadState,
    limits,
    joinedTo: joinedTo ? toThreadView(joinedTo, now) : null,
  });
}
