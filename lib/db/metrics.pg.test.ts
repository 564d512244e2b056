import { describe, expect, it } from "vitest";
import { STORES } from "@/e2e/support/both-stores";
import { BUILT_AT, sameAnswer, useSeededStore } from "@/e2e/support/seeded-stores";
import { createMetricsRegistry } from "@/lib/insights/metrics";
import { NOW } from "./fixture";
import { metricsSnapshot } from "./metrics";

/** /api/metrics answers the same on both stores over the same radar: the snapshot and its exposition text. */
describe.each(STORES)("metrics on %s", (store) => {
  useSeededStore(store);

  it("the snapshot and the Prometheus text", async () => {
    for (const now of [NOW, BUILT_AT + 60_000]) {
      const snapshot = await metricsSnapshot(now);
      expect(snapshot.notices.length).toBeGreaterThan(2);
      sameAnswer(store, `snapshot at ${now}`, snapshot);
      sameAnswer(store, `text at ${now}`, await createMetricsRegistry(() => metricsSnapshot(now)).scrape());
    }
  });
});
