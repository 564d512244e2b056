"use client";

import { useActionState, useEffect, useState } from "react";
import type { SourceOverview, SourceQuota } from "@/lib/wire/types";
import { createIngestToken } from "@/lib/actions/create-token";
import { importCapture } from "@/lib/actions/import-capture";
import { revokeIngestToken } from "@/lib/actions/revoke-token";
import { useCan } from "@/components/layout/signed-in";
import { updateSource } from "@/lib/actions/update-source";
import { Timestamp } from "@/components/time/timestamp";
import { Field, styles } from "@/components/ui/controls";
import { byteSize, quotaShare } from "@/lib/ui/format";
import { OtlpSettings } from "./otlp-settings";

type ShownToken = { token: string; sourceName: string };

export function SourcesView({ sources, presets, quota, endpoint }: { sources: SourceOverview[]; presets: string[]; quota: SourceQuota; endpoint: string }) {
  const [shownToken, setShownToken] = useState<ShownToken | null>(null);
  const isAdmin = useCan("admin");
  const isOperator = useCan("operator");
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
        <SourceCard key={source.id} source={source} presets={presets} quota={quota} endpoint={endpoint} onToken={setShownToken} />
      ))}
      {isAdmin && <NewSource onToken={setShownToken} />}
      {isOperator && <ImportCapture sources={sources} />}
    </div>
  );
}

/** Shows a token the moment an action issued it (it is never shown again). */
function useIssuedToken(state: Awaited<ReturnType<typeof createIngestToken>> | null, onToken: (token: ShownToken) => void) {
  useEffect(() => {
    if (state?.ok) onToken({ token: state.token, sourceName: state.sourceName });
  }, [state, onToken]);
}

function SourceCard({ source, presets, quota, endpoint, onToken }: { source: SourceOverview; presets: string[]; quota: SourceQuota; endpoint: string; onToken: (token: ShownToken) => void }) {
  const [updated, update, updating] = useActionState(updateSource, null);
  const [revoked, revoke, revoking] = useActionState(revokeIngestToken, null);
  const [created, create, creating] = useActionState(createIngestToken, null);
  const isAdmin = useCan("admin");
  useIssuedToken(created, onToken);
  const pending = updating || revoking || creating;
  const errors = [updated, revoked, created].flatMap((state) => (state && !state.ok ? [state.error] : []));
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
      <SourceUsage source={source} quota={quota} />
      <OtlpSettings source={source} endpoint={endpoint} />
      {/* Keyed by the saved settings: after a save the controls show what the server stored. */}
      {isAdmin && <form key={`${source.policy}-${source.capacityRecovery}-${source.resumeAtReset}-${source.incidentMinThreads}-${source.incidentWindowMs}`} action={update} className="flex flex-wrap items-end gap-4">
        <input type="hidden" name="sourceId" value={source.id} />
        <Field label="Policy preset">
          <select name="policy" defaultValue={source.policy ?? ""} className={styles.control} data-testid="source-policy">
            <option value="">default for each kind</option>
            {presets.map((preset) => <option key={preset} value={preset}>{preset}</option>)}
          </select>
        </Field>
        <label className="flex items-center gap-2 text-sm">
          <input type="checkbox" name="capacityRecovery" defaultChecked={source.capacityRecovery} data-testid="source-capacity-recovery" />
          Capacity recovery (up to 3 promptless continuations after a terminal capacity failure)
        </label>
        <label className="flex items-center gap-2 text-sm">
          <input type="checkbox" name="resumeAtReset" defaultChecked={source.resumeAtReset} data-testid="source-resume-at-reset" />
          Resume at reset (continue a turn stopped by a usage limit once its window resets)
        </label>
        {/* Blank: the global incident settings. */}
        <Field label="Incident: threads">
          <input type="number" name="incidentMinThreads" min={2} step={1} placeholder="default" defaultValue={source.incidentMinThreads ?? ""} className={styles.control + " w-28"} data-testid="source-incident-min-threads" />
        </Field>
        <Field label="Incident: within (seconds)">
          <input type="number" name="incidentWindowSeconds" min={10} max={3600} step={1} placeholder="default" defaultValue={source.incidentWindowMs === null ? "" : source.incidentWindowMs / 1000} className={styles.control + " w-28"} data-testid="source-incident-window" />
        </Field>
        <button type="submit" disabled={pending} className={styles.primaryButton}>Save</button>
      </form>}
      <div>
        <h3 className="mb-2 text-sm font-semibold">Ingest tokens</h3>
        <table className="min-w-full text-sm">
          <thead className="bg-slate-100 text-xs uppercase text-slate-600">
            <tr><th className="px-3 py-2 text-left">Token</th><th className="px-3 py-2 text-left">Label</th><th className="px-3 py-2 text-left">Created</th><th className="px-3 py-2 text-left">State</th><th className="px-3 py-2"><span className="sr-only">Actions</span></th></tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {source.tokens.map((token) => (
              <tr key={token.id} data-testid="token-row">
                <td className={styles.td + " font-mono"}>{token.prefix}…</td>
                <td className={styles.td}>{token.label ?? "—"}</td>
                <td className={styles.td}><Timestamp iso={token.createdAt} /></td>
                <td className={styles.td}>{token.revokedAt ? <>revoked <Timestamp iso={token.revokedAt} /></> : "active"}</td>
                <td className={styles.td + " text-right"}>
                  {isAdmin && !token.revokedAt && (
                    <form action={revoke}>
                      <input type="hidden" name="tokenId" value={token.id} />
                      <button type="submit" disabled={pending} className={styles.rowDangerButton}>
                        Revoke
                      </button>
                    </form>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {isAdmin && <form action={create}>
          <input type="hidden" name="sourceId" value={source.id} />
          <button type="submit" disabled={pending} className={`${styles.primaryButton} mt-3`}>
            Create token
          </button>
        </form>}
      </div>
      {errors.length > 0 && <p role="alert" className="text-sm text-red-800">{errors.join(" ")}</p>}
    </section>
  );
}

/** What the source stores against its quota; the larger share is the one that will refuse first. */
function SourceUsage({ source, quota }: { source: SourceOverview; quota: SourceQuota }) {
  const share = Math.max(source.events / quota.events, source.bytes / quota.bytes);
  return (
    <p data-testid="source-usage" className={`text-sm ${share >= 0.9 ? "text-red-800" : "text-slate-600"}`}>
      Stores {source.events.toLocaleString("en")} {source.events === 1 ? "event" : "events"} ({quotaShare(source.events, quota.events)} of {quota.events.toLocaleString("en")}) and{" "}
      {byteSize(source.bytes)} ({quotaShare(source.bytes, quota.bytes)} of {byteSize(quota.bytes)}).
      {share >= 0.9 && " Near its storage quota: ingestion is refused at the quota until retention frees room."}
    </p>
  );
}

function NewSource({ onToken }: { onToken: (token: ShownToken) => void }) {
  const [created, create, pending] = useActionState(createIngestToken, null);
  useIssuedToken(created, onToken);
  return (
    <form action={create} className="flex flex-wrap items-end gap-3 rounded-lg border border-dashed border-slate-300 bg-white p-4">
      <Field label="New source">
        <input name="name" required maxLength={100} placeholder="e.g. codex@build-7" className={styles.control} />
      </Field>
      <button type="submit" disabled={pending} className={styles.primaryButton}>Create source and token</button>
      {created && !created.ok && <p role="alert" className="text-sm text-red-800">{created.error}</p>}
    </form>
  );
}

function ImportCapture({ sources }: { sources: SourceOverview[] }) {
  const [outcome, submit, pending] = useActionState(importCapture, null);
  return (
    <form action={submit} className="space-y-3 rounded-lg border border-slate-200 bg-white p-5 shadow-sm">
      <h2 className="text-lg font-semibold">Import a capture</h2>
      <p className="text-sm text-slate-600">
        A capture file (one JSON object per line with <code>ts_ms</code> and the agent&apos;s line) is replayed with its original timing, to
        reconstruct an incident. Importing the same file twice changes nothing.
      </p>
      <div className="flex flex-wrap items-end gap-3">
        <Field label="Into source">
          <select name="sourceId" className={styles.control}>
            {sources.map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
          </select>
        </Field>
        <Field label="Capture file">
          <input type="file" name="file" accept=".jsonl,.ndjson,.json,application/x-ndjson" required className="text-sm" data-testid="capture-file" />
        </Field>
        <button type="submit" disabled={pending} className={styles.primaryButton}>{pending ? "Importing…" : "Import"}</button>
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
