/** What a server action answers: ok, or a refusal to show. */
export type ActionState = { ok: boolean; error?: string } | null;

/** A refusal next to the control that caused it (nothing while pending or when it succeeded). */
export function ActionOutcome({ state, testId }: { state: ActionState; testId: string }) {
  if (!state || state.ok) return null;
  return <p role="alert" data-testid={testId} className="mt-1 text-xs text-red-800">{state.error}</p>;
}
