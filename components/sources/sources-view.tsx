"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import type { SourceOverview } from "@/lib/wire/types";
import { createIngestToken } from "@/lib/actions/create-token";
import { importCapture, type ImportCaptureState } from "@/lib/actions/import-capture";
import { revokeIngestToken } from "@/lib/actions/revoke-token";
import { updateSource } from "@/lib/actions/update-source";
import { Timestamp } from "@/components/time/timestamp";

const input = "rounded-md border border-slate-300 px-2 py-1.5 text-sm focus-visible:outline-2 focus-visible:outline-sky-600";
const button = "rounded-md bg-slate-800 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-900 disabled:bg-slate-300 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-sky-600";

export function SourcesView({ sources, presets }: { sources: SourceOverview[]; presets: string[] }) {
  const [shownToken, setShownToken] = useState<{ token: string; sourceName: string } | null>(null);
  return (
    <div className="space-y-6">
      <h1 className="text-2xl font-semibold tracking-tight">Sources</h1>
      {shownToken && (
        <div role="status" data-testid="new-token" className="space-y-1 rounded-lg border border-amber-300 bg-amber-50 p-4">
          <p className="font-medium">New ingest token for {shownToken.sourceName} — copy it now, it is not shown again:</p>
          <code className="block break-all rounded bg-white p-2 font-mono text-sm">{shownToken.token}</code>
        </div>
      )}
      {sources.map((source) => (
        <SourceCard key={source.id} source={source} presets={presets} onToken={setShownToken} />
      ))}
      <NewSource onToken={setShownToken} />
      <ImportCapture sources={sources} />
    </div>
  );
}

function SourceCard({ source, presets, onToken }: { source: SourceOverview; presets: string[]; onToken: (t: { token: string; sourceName: string }) => void }) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const run = (action: () => Promise<{ ok: boolean; error?: string }>) =>
    startTransition(async () => {
      const outcome = await action();
      setError(outcome.ok ? null : (outcome.error ?? "failed"));
      router.refresh();
    });
  return (
    <section aria-labelledby={`source-${source.id}`} data-testid="source-card" className="space-y-4 rounded-lg border border-slate-200 bg-white p-5 shadow-sm">
      <div className="flex flex-wrap items-baseline gap-4">
        <h2 id={`source-${source.id}`} className="text-lg font-semibold">{source.name}</h2>
        <span className="font-mono text-xs text-slate-500">{source.id}</span>
      </div>
      <dl className="grid grid-cols-2 gap-4 text-sm md:grid-cols-4">
        <div><dt className="text-xs uppercase text-slate-500">Last seen</dt><dd><Timestamp iso={source.lastSeenAt} /></dd></div>
        <div><dt className="text-xs uppercase text-slate-500">Events</dt><dd className="tabular-nums">{source.events}</dd></div>
        <div><dt className="text-xs uppercase text-slate-500">Threads</dt><dd className="tabular-nums">{source.threads}</dd></div>
        <div><dt className="text-xs uppercase text-slate-500">Created</dt><dd><Timestamp iso={source.createdAt} /></dd></div>
      </dl>
      <form
        className="flex flex-wrap items-end gap-4"
        onSubmit={(event) => {
          event.preventDefault();
          const data = new FormData(event.currentTarget);
          run(() => updateSource({ sourceId: source.id, policy: String(data.get("policy") ?? ""), capacityRecovery: data.get("capacityRecovery") === "on" }));
        }}
      >
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-600">
          Policy preset
          <select name="policy" defaultValue={source.policy ?? ""} className={input} data-testid="source-policy">
            <option value="">default for each kind</option>
            {presets.map((preset) => <option key={preset} value={preset}>{preset}</option>)}
          </select>
        </label>
        <label className="flex items-center gap-2 text-sm">
          <input type="checkbox" name="capacityRecovery" defaultChecked={source.capacityRecovery} data-testid="source-capacity-recovery" />
          Capacity recovery (up to 3 promptless continuations after a terminal capacity failure)
        </label>
        <button type="submit" disabled={pending} className={button}>Save</button>
      </form>
      <div>
        <h3 className="mb-2 text-sm font-semibold">Ingest tokens</h3>
        <table className="min-w-full text-sm">
          <thead className="bg-slate-100 text-xs uppercase text-slate-600">
            <tr><th className="px-3 py-2 text-left">Token</th><th className="px-3 py-2 text-left">Label</th><th className="px-3 py-2 text-left">Created</th><th className="px-3 py-2 text-left">State</th><th className="px-3 py-2"><span className="sr-only">Actions</span></th></tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {source.tokens.map((token) => (
              <tr key={token.id} data-testid="token-row">
                <td className="px-3 py-2 font-mono">{token.prefix}…</td>
                <td className="px-3 py-2">{token.label ?? "—"}</td>
                <td className="px-3 py-2"><Timestamp iso={token.createdAt} /></td>
                <td className="px-3 py-2">{token.revokedAt ? <>revoked <Timestamp iso={token.revokedAt} /></> : "active"}</td>
                <td className="px-3 py-2 text-right">
                  {!token.revokedAt && (
                    <button type="button" disabled={pending} onClick={() => run(() => revokeIngestToken({ tokenId: token.id }))} className="rounded-md px-2 py-1 text-xs text-red-800 ring-1 ring-red-300 hover:bg-red-50">
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <button
          type="button"
          disabled={pending}
          className={`${button} mt-3`}
          onClick={() =>
            run(async () => {
              const outcome = await createIngestToken({ sourceId: source.id });
              if (outcome.ok) onToken(outcome);
              return outcome;
            })
          }
        >
          Create token
        </button>
      </div>
      {error && <p role="alert" className="text-sm text-red-800">{error}</p>}
    </section>
  );
}

function NewSource({ onToken }: { onToken: (t: { token: string; sourceName: string }) => void }) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      className="flex flex-wrap items-end gap-3 rounded-lg border border-dashed border-slate-300 bg-white p-4"
      onSubmit={(event) => {
        event.preventDefault();
        const form = event.currentTarget;
        const name = String(new FormData(form).get("name") ?? "");
        startTransition(async () => {
          const outcome = await createIngestToken({ name });
          if (outcome.ok) {
            onToken(outcome);
            form.reset();
          }
          setError(outcome.ok ? null : outcome.error);
          router.refresh();
        });
      }}
    >
      <label className="flex flex-col gap-1 text-xs font-medium text-slate-600">
        New source
        <input name="name" required maxLength={100} placeholder="e.g. codex@build-7" className={input} />
      </label>
      <button type="submit" disabled={pending} className={button}>Create source and token</button>
      {error && <p role="alert" className="text-sm text-red-800">{error}</p>}
    </form>
  );
}

function ImportCapture({ sources }: { sources: SourceOverview[] }) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const [outcome, setOutcome] = useState<ImportCaptureState | null>(null);
  return (
    <form
      className="space-y-3 rounded-lg border border-slate-200 bg-white p-5 shadow-sm"
      onSubmit={(event) => {
        event.preventDefault();
        const data = new FormData(event.currentTarget);
        startTransition(async () => {
          setOutcome(await importCapture(data));
          router.refresh();
        });
      }}
    >
      <h2 className="text-lg font-semibold">Import a capture</h2>
      <p className="text-sm text-slate-600">
        A capture file (one JSON object per line with <code>ts_ms</code> and the agent&apos;s line) is replayed with its original timing, to
        reconstruct an incident. Importing the same file twice changes nothing.
      </p>
      <div className="flex flex-wrap items-end gap-3">
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-600">
          Into source
          <select name="sourceId" className={input}>
            {sources.map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
          </select>
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-600">
          Capture file
          <input type="file" name="file" accept=".jsonl,.ndjson,.json,application/x-ndjson" required className="text-sm" data-testid="capture-file" />
        </label>
        <button type="submit" disabled={pending} className={button}>{pending ? "Importing…" : "Import"}</button>
      </div>
      {outcome && (
        <p role="status" data-testid="import-result" className={outcome.ok ? "text-sm text-emerald-800" : "text-sm text-red-800"}>
          {outcome.ok
            ? `Imported ${outcome.format} capture: ${outcome.accepted} accepted, ${outcome.duplicates} duplicates, ${outcome.rejected} rejected, ${outcome.skipped} bookkeeping lines skipped.`
            : outcome.error}
        </p>
      )}
    </form>
  );
}
