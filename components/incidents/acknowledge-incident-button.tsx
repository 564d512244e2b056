"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useState, useTransition } from "react";
import { acknowledgeIncident } from "@/lib/actions/acknowledge-incident";
import { queryKeys } from "@/lib/client/queries";
import type { IncidentView } from "@/lib/wire/types";
import { useCan } from "@/components/layout/signed-in";
import { styles } from "@/components/ui/controls";

/** Who is on an incident, or (for operators) the button that says "I'm on it". */
export function AcknowledgeIncident({ incident }: { incident: Pick<IncidentView, "id" | "state" | "acknowledgedBy"> }) {
  const queryClient = useQueryClient();
  const canAcknowledge = useCan("operator");
  const [pending, startTransition] = useTransition();
  const [error, setError] = useState<string | null>(null);
  if (incident.acknowledgedBy) {
    return (
      <span data-testid="incident-acknowledged" className="text-sm text-slate-700">
        {incident.acknowledgedBy} is on it
      </span>
    );
  }
  if (!canAcknowledge || incident.state !== "open") return null;
  return (
    <>
      <button
        type="button"
        data-testid="incident-acknowledge"
        disabled={pending}
        className={styles.secondaryButton}
        onClick={() =>
          startTransition(async () => {
            const outcome = await acknowledgeIncident({ incidentId: incident.id });
            setError(outcome.ok ? null : outcome.error);
            await queryClient.invalidateQueries({ queryKey: queryKeys.incidents });
          })
        }
      >
        I&apos;m on it
      </button>
      {error && <span role="alert" className="text-sm text-red-800">{error}</span>}
    </>
  );
}
