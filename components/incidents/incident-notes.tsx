"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useState, useTransition } from "react";
import { annotateIncident } from "@/lib/actions/annotate-incident";
import { queryKeys } from "@/lib/client/queries";
import type { IncidentDetail } from "@/lib/wire/types";
import { useCan } from "@/components/layout/signed-in";
import { Timestamp } from "@/components/time/timestamp";
import { styles } from "@/components/ui/controls";

/** The incident's notes, oldest first, and (for operators) a box to add one. */
export function IncidentNotes({ incident }: { incident: Pick<IncidentDetail, "id" | "notes"> }) {
  const queryClient = useQueryClient();
  const canAnnotate = useCan("operator");
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();
  return (
    <section aria-labelledby="incident-notes" className="space-y-2 rounded-lg bg-white p-4 ring-1 ring-slate-200">
      <h2 id="incident-notes" className="text-base font-semibold">Notes</h2>
      {incident.notes.length === 0 ? (
        <p className="text-sm text-slate-600">No notes yet.</p>
      ) : (
        <ol className="space-y-1 text-sm" data-testid="incident-notes">
          {incident.notes.map((note, i) => (
            <li key={i}>
              <Timestamp iso={note.at} className="text-slate-500" /> <span className="font-medium">{note.actor}</span>: {note.text}
            </li>
          ))}
        </ol>
      )}
      {canAnnotate && (
        <form
          className="flex gap-2"
          onSubmit={(event) => {
            event.preventDefault();
            startTransition(async () => {
              const outcome = await annotateIncident({ incidentId: incident.id, text });
              setError(outcome.ok ? null : outcome.error);
              if (outcome.ok) setText("");
              await queryClient.invalidateQueries({ queryKey: queryKeys.incidents });
            });
          }}
        >
          <input aria-label="Add a note" value={text} onChange={(e) => setText(e.target.value)} maxLength={2000} className={`${styles.control} flex-1`} placeholder="e.g. failed over to another model" />
          <button type="submit" disabled={pending || !text.trim()} className={styles.secondaryButton} data-testid="incident-note-add">
            Add note
          </button>
          {error && <span role="alert" className="text-sm text-red-800">{error}</span>}
        </form>
      )}
    </section>
  );
}
