import { beforeEach, describe, expect, it } from "vitest";
import { shared } from "@/lib/process-state";
import type { ExposedCounters, InstanceState } from "@/lib/insights/metrics";
import { scrapeMetrics, type RenderMetrics } from "./metrics-scrape";

describe("scrapeMetrics", () => {
  beforeEach(() => {
    delete shared<{ metricsExposed?: unknown }>("metricsExposed", () => ({})).metricsExposed;
  });

  it("hands every scrape the counters' values the one before it exposed, with this instance's state", async () => {
    const asked: { now: number; instance: InstanceState; exposedBefore: ExposedCounters | null }[] = [];
    const render: RenderMetrics = async (now, instance, exposedBefore) => {
      asked.push({ now, instance, exposedBefore });
      return { text: `text ${now}\n`, contentType: "text/plain; version=0.0.4; charset=utf-8", exposed: `exposed at ${now}` };
    };
    expect((await scrapeMetrics(1, render)).text).toBe("text 1\n");
    await scrapeMetrics(2, render);
    await scrapeMetrics(3, render);
    expect(asked.map((a) => [a.now, a.exposedBefore])).toEqual([
      [1, null],
      [2, "exposed at 1"],
      [3, "exposed at 2"],
    ]);
    expect(asked[0].instance).toEqual({ watchdogLeader: expect.any(Boolean) });
  });

  it("keeps what the last answered scrape exposed when one fails", async () => {
    const exposedBefore: (ExposedCounters | null)[] = [];
    let fail = false;
    const render: RenderMetrics = async (now, _instance, before) => {
      exposedBefore.push(before);
      if (fail) throw new Error("the read worker stopped");
      return { text: "", contentType: "text/plain", exposed: `exposed at ${now}` };
    };
    await scrapeMetrics(1, render);
    fail = true;
    await expect(scrapeMetrics(2, render)).rejects.toThrow("the read worker stopped");
    fail = false;
    await scrapeMetrics(3, render);
    expect(exposedBefore).toEqual([null, "exposed at 1", "exposed at 1"]);
  });
});
