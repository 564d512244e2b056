import { ATTENTION_STATUSES } from "@/lib/threads/statuses";
import type { ThreadBoard, ThreadView } from "@/lib/wire/types";

/**
 * The board's order in the browser: those needing attention first, then newest first, then by
 * key. It is the order the server pages in (lib/db/threads.ts; threads.test.ts checks the two
 * agree), so rows brought by key can be put where the next page read would show them.
 */
export function boardOrder(a: ThreadView, b: ThreadView): number {
  const attention = Number(ATTENTION_STATUSES.includes(b.status)) - Number(ATTENTION_STATUSES.includes(a.status));
  if (attention !== 0) return attention;
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? 1 : -1;
  return b.key - a.key;
}

/** Rows read by key with a board's filter (`GET /api/v1/threads?keys=…&matching=1`). */
export interface RowsRead {
  /** The keys asked for: those not in `fresh` no longer match the board's filter. */
  asked: number[];
  fresh: ThreadView[];
  /** Some of them are new or changed status: rows may come, go or move. */
  reorder: boolean;
  serverTime: string;
}

/**
 * A board with rows read by key applied: changed rows replaced, rows that left the filter
 * removed, and — when membership or order may have changed — the rows re-sorted, a first page
 * gaining the new rows that sort onto it. A later page cannot place a new row (what precedes it
 * is not in the browser): the page read brings those. Counts wait for the page read too; the
 * total follows the rows gained and lost so the pager stays consistent until then.
 */
export function mergeBoardRows(board: ThreadBoard, read: RowsRead): ThreadBoard {
  const fresh = new Map(read.fresh.map((thread) => [thread.key, thread]));
  const asked = new Set(read.asked);
  const shown = new Set(board.threads.map((thread) => thread.key));
  let threads = board.threads.filter((thread) => !asked.has(thread.key) || fresh.has(thread.key)).map((thread) => fresh.get(thread.key) ?? thread);
  const removed = board.threads.length - threads.length;
  let added = 0;
  if (read.reorder) {
    if (board.page === 1) {
      const arrivals = read.fresh.filter((thread) => !shown.has(thread.key));
      // A row pushed off the page still counts: only arrivals and departures change the total.
      threads = [...threads, ...arrivals].sort(boardOrder).slice(0, board.pageSize);
      added = arrivals.length;
    } else {
      threads = threads.toSorted(boardOrder);
    }
  }
  if (removed === 0 && added === 0 && threads.every((thread, i) => thread === board.threads[i])) return board;
  // The board is as new as the newest read in it: an older read applied late never makes it look older.
  const serverTime = read.serverTime > board.serverTime ? read.serverTime : board.serverTime;
  return { ...board, threads, total: Math.max(threads.length, board.total + added - removed), serverTime };
}

/**
 * A row read with its place in this browser's order of reads: taken when a request is sent (a page
 * or a row read) or when a notice's rows arrive. Never a server's clock: behind a balancer reads
 * are answered by instances whose clocks disagree, and a newer row read on a slower clock must
 * still win. The order is exact for what the guard needs: every change is committed before its
 * notice is sent, so whatever this browser reads after a notice arrives (and the rows the notice
 * carries) shows that change; a read sent earlier may be older, never newer than the change.
 */
export interface OrderedRowsRead extends RowsRead {
  order: number;
}

/** Where each of a board's rows stands in the order of reads: its page read for every row, later row reads for the rows they brought. */
export interface RowOrders {
  page: number;
  rows: Map<number, number>;
}

/**
 * The part of a row read that is news to a board: the keys a later read (a row read or the page
 * read) already brought are left out, so a slower read sent earlier never puts an older row back
 * (a row that flickers back for one round trip). The read's order is recorded for the keys it keeps.
 */
export function newerPart(read: OrderedRowsRead, orders: RowOrders): OrderedRowsRead {
  const readAt = (key: number) => Math.max(orders.page, orders.rows.get(key) ?? orders.page);
  const older = new Set(read.asked.filter((key) => readAt(key) > read.order));
  for (const key of read.asked) if (!older.has(key)) orders.rows.set(key, read.order);
  if (older.size === 0) return read;
  return { ...read, asked: read.asked.filter((key) => !older.has(key)), fresh: read.fresh.filter((thread) => !older.has(thread.key)) };
}
