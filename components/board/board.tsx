"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useRef, useState } from "react";
import { boardQuery } from "@/lib/client/queries";
import type { FilterOptions, IncidentList, ThreadBoard } from "@/lib/wire/types";
import { statusLabel } from "@/lib/ui/format";
import { LiveIndicator } from "@/components/live/live-indicator";
import { usePollInterval } from "@/components/live/live-updates";
import { useServerClock } from "@/components/time/server-clock";
import { IncidentBanners } from "@/components/incidents/incident-banners";
import { ArchivedToggle } from "./archived-toggle";
import { BoardFilters } from "./board-filters";
import { EmptyBoard } from "./empty-board";
import { StatusCounts } from "./status-counts";
import { StopAllMatching } from "./stop-all-matching";
import { ThreadsTable } from "./threads-table";

/** The operator board: everything retrying, waiting, stalled or exhausted first, live. */
export function Board({
  initial,
  queryString,
  options,
  filtered,
  incidents,
}: {
  initial: ThreadBoard;
  queryString: string;
  options: FilterOptions;
  filtered: boolean;
  /** The open incidents when the page was rendered (their banners). */
  incidents: IncidentList;
}) {
  const { observe } = useServerClock();
  const refetchInterval = usePollInterval();
  const query = useQuery({ ...boardQuery(queryString), initialData: initial, refetchInterval });
  const board = query.data;
  useEffect(() => observe(board.serverTime), [board.serverTime, observe]);
  const announcement = useStatusAnnouncements(board);

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-4">
        <h1 className="text-2xl font-semibold tracking-tight">Board</h1>
        <LiveIndicator lastUpdated={query.dataUpdatedAt || null} />
        {query.isError && (
          <span role="alert" className="text-sm text-red-800">
            Could not refresh: {query.error.message}
          </span>
        )}
        <div className="ml-auto">
          <StopAllMatching queryString={queryString} count={board.stoppable} />
        </div>
      </div>
      <IncidentBanners initial={incidents} />
      <StatusCounts counts={board.counts} queryString={queryString} />
      <BoardFilters options={options} />
      <ArchivedToggle />
      <p className="sr-only" aria-live="polite" data-testid="status-announcer">
        {announcement}
      </p>
      {board.threads.length === 0 ? (
        <EmptyBoard filtered={filtered} />
      ) : (
        <>
          <ThreadsTable threads={board.threads} />
          <BoardPages board={board} queryString={queryString} />
        </>
      )}
    </div>
  );
}

/** "Threads 51–100 of 340", with links to the neighbouring pages (the page lives in the URL too). */
function BoardPages({ board, queryString }: { board: ThreadBoard; queryString: string }) {
  const first = (board.page - 1) * board.pageSize + 1;
  const last = first + board.threads.length - 1;
  const href = (page: number) => {
    const params = new URLSearchParams(queryString);
    if (page > 1) params.set("page", String(page));
    else params.delete("page");
    const text = params.toString();
    return text ? `/?${text}` : "/";
  };
  return (
    <nav aria-label="Pages" className="flex items-center gap-4 text-sm text-slate-600" data-testid="board-pages">
      <span>
        Threads {first}–{last} of {board.total}
      </span>
      {board.page > 1 && (
        <Link href={href(board.page - 1)} className="text-sky-800 underline">
          Previous page
        </Link>
      )}
      {last < board.total && (
        <Link href={href(board.page + 1)} className="text-sky-800 underline">
          Next page
        </Link>
      )}
    </nav>
  );
}

/** Status changes are announced to screen readers (countdown ticks are not). */
function useStatusAnnouncements(board: ThreadBoard): string {
  const previous = useRef(new Map<number, string>());
  const [text, setText] = useState("");
  useEffect(() => {
    const changes: string[] = [];
    for (const thread of board.threads) {
      const before = previous.current.get(thread.key);
      if (before && before !== thread.status) changes.push(`${thread.title || thread.id} is now ${statusLabel(thread.status)}`);
      previous.current.set(thread.key, thread.status);
    }
    if (changes.length) setText(changes.join(". "));
  }, [board]);
  return text;
}
