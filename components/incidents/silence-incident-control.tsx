"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useState, useTransition } from "react";
import { silenceIncident } from "@/lib/actions/silence-incident";
import { queryKeys } from "@/lib/client/queries";
import type { IncidentView } from "@/lib/wire/types";
import { useCan } from "@/components/layout/signed-in";
import { Timestamp } from "@/components/time/timestamp";
import { styles } from "@/components/ui/controls";

/** How long Silence alerts lasts, in minutes. */
const SILENCE_CHOICES = [
  { minutes: 30, label: "30 min" },
  { minutes: 60, label: "1 h" },
  { minutes: 240, label: "4 h" },
  { minutes: 1440, label: "1 day" },
];

/** An incident's alerts silenced for a while (operators), or the time the silence ends. */
export function SilenceIncident({ incident }: { incident: Pick<IncidentView, "id" | "state" | "silencedUntil"> }) {
  const queryClient = useQueryClient();
  const canSilence = useCan("operator");
  const [pending, startTransition] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const run = (minutes: number) =>
    startTransition(async () => {
      const outcome = await silenceIncident({ incidentId: incident.id, minutes });
      setError(outcome.ok ? null : outcome.error);
      await queryClient.invalidateQueries({ queryKey: queryKeys.incidents });
    });
  if (incident.state !== "open") return null;
  return (
    <span className="flex items-center gap-2 text-sm text-slate-700">
      {incident.silencedUntil ? (
        <>
          <span data-testid="incident-silenced">
            Alerts silenced until <Timestamp iso={incident.silencedUntil} withDate={false} />
          </span>
          {canSilence && (
            <button type="button" data-testid="incident-unsilence" disabled={pending} className={styles.secondaryButton} onClick={() => run(0)}>
              Unsilence
            </button>
          )}
        </>
      ) : (
        canSilence && (
          <label className="flex items-center gap-1">
            <span className="sr-only">Silence this incident&apos;s alerts</span>
            <select
              data-testid="incident-silence"
              disabled={pending}
              className={styles.control}
              value=""
              onChange={(event) => event.target.value && run(Number(event.target.value))}
            >
              <option value="">Silence alerts…</option>
              {SILENCE_CHOICES.map((choice) => (
                <option key={choice.minutes} value={choice.minutes}>
                  for {choice.label}
                </option>
              ))}
            </select>
          </label>
        )
      )}
      {error && <span role="alert" className="text-red-800">{error}</span>}
    </span>
  );
}
