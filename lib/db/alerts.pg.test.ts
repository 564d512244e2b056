import { describe, expect, it } from "vitest";
import { STORES } from "@/e2e/support/both-stores";
import { BUILT_AT, sameAnswer, useSeededStore } from "@/e2e/support/seeded-stores";
import type { Alert } from "@/lib/alerts/rules";
import { alertDestinationName, alertObservations, alertsNotQueued, alertsOverview, dueAlerts, nextAlertDue, stalledThreads } from "./alerts";
import { NOW, T0 } from "./fixture";

/** The Alerts page and what alert delivery and the alert conditions read answer the same on both stores. */
describe.each(STORES)("alert reads on %s", (store) => {
  useSeededStore(store);

  it("the overview, due alerts, observations, stalled threads and the outbox's keys", async () => {
    const overview = await alertsOverview(NOW);
    expect(overview.outbox.map((o) => o.history.length)).toEqual([2, 1]);
    sameAnswer(store, "overview", overview);
    sameAnswer(store, "overview, one", await alertsOverview(NOW, 1));
    for (const now of [T0, NOW]) sameAnswer(store, `due at ${now}`, await dueAlerts(now, 10));
    sameAnswer(store, "next due", await nextAlertDue());
    const observations = await alertObservations();
    expect(observations.observed.sources.length).toBeGreaterThan(2);
    // Sources, limits and thresholds are sets to the conditions: SQLite lists them in its row order, compared here sorted.
    const byId = (x: { id: string }, y: { id: string }) => x.id.localeCompare(y.id);
    const { sources, limits, ...observed } = observations.observed;
    sameAnswer(store, "observations", {
      ...observations,
      observed: { ...observed, sources: sources.toSorted(byId), limits: limits.map((l) => JSON.stringify(l)).sort() },
      learnt: [...observations.learnt].sort(),
      thresholds: observations.thresholds.toSorted(),
      ruleEvents: [...observations.ruleEvents].sort(),
    });
    for (const before of [NOW, BUILT_AT]) sameAnswer(store, `stalled before ${before}`, await stalledThreads(before));
    const alerts = ["k-1", "k-3"].map((key) => ({ key }) as Alert);
    expect((await alertsNotQueued(alerts)).map((a) => a.key)).toEqual(["k-3"]);
    expect(await alertDestinationName("dest-1")).toBe("ops");
    expect(await alertDestinationName("nope")).toBeNull();
  });
});
