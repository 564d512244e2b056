import { describe, expect, it } from "vitest";
import { BY_OPENTELEMETRY, parseCapabilities, threadControl, WITHOUT_RELAY } from "./control";

describe("threadControl", () => {
  it.each([
    ["a relay that announced both", { capabilities: "interrupt,continue", lastPolledAt: 1, lastOtlpAt: null }, true, true, null],
    ["a one-shot relay (interrupt only)", { capabilities: "interrupt", lastPolledAt: 1, lastOtlpAt: null }, true, false, "not continue"],
    ["a source that announced nothing it can do", { capabilities: "", lastPolledAt: 1, lastOtlpAt: 5 }, false, false, WITHOUT_RELAY],
    ["an older relay that polls without announcing", { capabilities: null, lastPolledAt: 1, lastOtlpAt: null }, true, true, null],
    ["an older relay that also sends OpenTelemetry", { capabilities: null, lastPolledAt: 1, lastOtlpAt: 2 }, true, true, null],
    ["OpenTelemetry only, never polled", { capabilities: null, lastPolledAt: null, lastOtlpAt: 2 }, false, false, BY_OPENTELEMETRY],
    ["posts events only, never polled", { capabilities: null, lastPolledAt: null, lastOtlpAt: null }, true, false, "without a relay"],
  ] as const)("%s", (_name, source, interrupt, resume, why) => {
    const control = threadControl(source);
    expect(control.interrupt).toBe(interrupt);
    expect(control.continue).toBe(resume);
    if (why === null) expect(control.why).toBeNull();
    else expect(control.why).toContain(why);
  });

  it("ignores words it does not know and case", () => {
    expect(parseCapabilities(" Interrupt , teleport,continue")).toEqual(["interrupt", "continue"]);
    expect(parseCapabilities("")).toEqual([]);
  });
});
