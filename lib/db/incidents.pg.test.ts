import { describe, expect, it } from "vitest";
import { STORES } from "@/e2e/support/both-stores";
import { BUILT_AT, sameAnswer, useSeededStore } from "@/e2e/support/seeded-stores";
import { NOW } from "./fixture";
import { incidentDetail, listIncidents, nextIncidentQuietEnd, openIncidentThreads, stoppableIncidentThreadKeys } from "./incidents";

/** The incidents pages, the board's markers and Stop all in an incident read the same on both stores. */
describe.each(STORES)("incident reads on %s", (store) => {
  useSeededStore(store);

  it("the list, every detail, the board's markers and the stoppable threads", async () => {
    for (const now of [NOW, BUILT_AT]) {
      for (const state of ["all", "open", "closed"] as const) sameAnswer(store, `list ${state} at ${now}`, await listIncidents(state, now));
      for (const id of ["inc-open", "inc-closed", "inc-forming", "nope"]) sameAnswer(store, `detail ${id} at ${now}`, await incidentDetail(id, now));
    }
    expect((await incidentDetail("inc-open", NOW))?.notes).toHaveLength(2);
    expect((await listIncidents("all", NOW)).incidents.map((incident) => incident.id)).toEqual(["inc-open", "inc-closed"]);
    sameAnswer(store, "markers", [...(await openIncidentThreads())]);
    for (const id of ["inc-open", "inc-closed", "nope"]) sameAnswer(store, `stoppable ${id}`, await stoppableIncidentThreadKeys(id));
    sameAnswer(store, "quiet end", await nextIncidentQuietEnd(60_000));
  });
});
