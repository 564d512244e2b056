"use client";

import { useEffect, useState } from "react";

/** What a new user sees: how to send the first event, with this server's own URL. */
export function EmptyBoard({ filtered }: { filtered: boolean }) {
  const [origin, setOrigin] = useState("http://127.0.0.1:3000");
  useEffect(() => setOrigin(window.location.origin), []);
  if (filtered) {
    return (
      <p data-testid="empty-board" className="rounded-lg border border-dashed border-slate-300 bg-white p-6 text-slate-700">
        No threads match this filter.
      </p>
    );
  }
  const curl = `curl -X POST ${origin}/api/v1/events \\
  -H "Authorization: Bearer $RADAR_TOKEN" \\
  -H "Content-Type: application/json" \\
  -d '{"threadId":"demo-1","type":"retry","agent":"codex","provider":"openai","model":"gpt-5.5",
       "attempt":1,"maxAttempts":5,"error":{"httpStatus":429,"message":"Rate limit reached","retryAfter":"30"}}'`;
  return (
    <section data-testid="empty-board" className="space-y-3 rounded-lg border border-dashed border-slate-300 bg-white p-6">
      <h2 className="text-lg font-semibold">No threads yet</h2>
      <p className="text-slate-700">
        Send a first event with the ingest token printed when the server first started (or create one on the{" "}
        <a href="/sources" className="text-sky-800 underline">Sources</a> page):
      </p>
      <pre className="overflow-x-auto rounded bg-slate-900 p-4 text-sm text-slate-100">
        <code>{curl}</code>
      </pre>
      <p className="text-sm text-slate-600">
        Or supervise a real agent with the relay: <code className="rounded bg-slate-100 px-1">npm run relay -- codex-app-server --prompt &quot;…&quot;</code>, or run{" "}
        <code className="rounded bg-slate-100 px-1">npm run demo</code> for a simulated fleet.
      </p>
    </section>
  );
}
