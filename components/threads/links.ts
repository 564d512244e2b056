/** A thread's permalink: the agent's own id, plus its source because ids are unique only per source. */
export function threadHref(thread: { id: string; sourceId: string }): string {
  return `/threads/${encodeURIComponent(thread.id)}?source=${encodeURIComponent(thread.sourceId)}`;
}
