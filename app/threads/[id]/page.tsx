import { pageAccess } from "@/lib/server/page-access";
import Link from "next/link";
import { threadDetail } from "@/lib/db/threads";
import { resolveThread } from "@/lib/server/resolve-thread";
import { ThreadPage } from "@/components/threads/thread-page";

export const dynamic = "force-dynamic";

export default async function ThreadRoute({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { id: rawId } = await params;
  await pageAccess("viewer", `/threads/${rawId}`);
  const id = decodeURIComponent(rawId);
  const source = (await searchParams).source;
  const resolved = await resolveThread(id, typeof source === "string" ? source : null);
  if (!resolved.ok) {
    return (
      <div role="alert" className="space-y-3 rounded-md bg-white p-6 ring-1 ring-slate-200">
        <h1 className="text-xl font-semibold">{resolved.status === 404 ? "Thread not found" : "Which thread?"}</h1>
        <p>{resolved.error}</p>
        {resolved.candidates && (
          <ul className="list-disc pl-6">
            {resolved.candidates.map((c) => (
              <li key={c.sourceId}>
                <Link className="text-sky-800 underline" href={`/threads/${encodeURIComponent(id)}?source=${encodeURIComponent(c.sourceId)}`}>
                  {id} from {c.source}
                </Link>
              </li>
            ))}
          </ul>
        )}
        <Link href="/" className="text-sky-800 underline">Back to the board</Link>
      </div>
    );
  }
  const detail = await threadDetail(resolved.key);
  if (!detail) return <p role="alert">Thread not found.</p>;
  return <ThreadPage threadKey={resolved.key} initial={detail} />;
}
