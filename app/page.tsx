import { pageAccess } from "@/lib/server/page-access";
import { Board } from "@/components/board/board";
import { filterOptions, threadBoard } from "@/lib/db/threads";
import { listIncidents } from "@/lib/db/incidents";
import { isFiltered, parseThreadQuery, threadQueryString } from "@/lib/threads/filter";

export const dynamic = "force-dynamic";

export default async function BoardPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await pageAccess("viewer", "/");
  const parsed = parseThreadQuery(await searchParams);
  if (!parsed.ok) {
    return (
      <p role="alert" className="rounded-md bg-red-50 p-4 text-red-900">
        This board link has a bad filter — {parsed.error}. <a href="/" className="underline">Show all threads</a>.
      </p>
    );
  }
  const { page, pageSize, ...filter } = parsed.query;
  const [board, options, incidents] = await Promise.all([threadBoard(filter, { page, pageSize, attentionFirst: true }), filterOptions(), listIncidents("open")]);
  return <Board initial={board} queryString={threadQueryString(parsed.query).replace(/^\?/, "")} options={options} filtered={isFiltered(parsed.query)} incidents={incidents} />;
}
