import { pageAccess } from "@/lib/server/page-access";
import { Board } from "@/components/board/board";
import { read } from "@/lib/server/off-thread";
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
  // On the read worker: this thread ingests, and a page render's reads would hold it.
  const now = Date.now();
  const [board, options, incidents] = await Promise.all([read("board", filter, { page, pageSize, attentionFirst: true }, now), read("filterOptions"), read("incidents", "open", now)]);
  return <Board initial={board} queryString={threadQueryString(parsed.query).replace(/^\?/, "")} options={options} filtered={isFiltered(parsed.query)} incidents={incidents} />;
}
