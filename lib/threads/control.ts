/**
 * What a thread's source can carry out: the one rule behind which controls (Stop, Stop all,
 * Resume now, Retry now) are offered, and behind refusing a directive nobody could receive.
 *
 * - A relay announces what it can do when it long-polls GET /api/v1/directives?can=interrupt,continue
 *   (`can=` with nothing: it can do neither). The latest announcement counts.
 * - A source that polls without announcing is an older relay: it carries out both, as before.
 * - A source that never polled and sends OpenTelemetry has no way back to its agent: nothing.
 * - A source that never polled otherwise (curl, a proxy, a harness reading the ingest answer) can
 *   still be asked to stop: the ingest answer and a later long-poll carry the interrupt, and the
 *   stop grace turns it broken if nobody acknowledges. It cannot be resumed: continuing a turn
 *   needs a relay that announced it.
 */

import { RESUMABLE_STATUSES, RETRYABLE_NOW_STATUSES } from "./statuses";

export const CAPABILITIES = ["interrupt", "continue"] as const;
export type Capability = (typeof CAPABILITIES)[number];

export interface SourceReach {
  /** As stored: comma-separated, or null when the source never announced. */
  capabilities: string | null;
  lastPolledAt: Date | number | null;
  lastOtlpAt: Date | number | null;
}

export interface ThreadControl {
  interrupt: boolean;
  continue: boolean;
  /** Why a control is absent, in the operator's words; null when both are possible. */
  why: string | null;
}

export const WITHOUT_RELAY = "Reported without a relay: nothing can reach this agent.";
export const BY_OPENTELEMETRY = "Reported by OpenTelemetry; attach the relay to control it.";

/** Parses an announcement (`interrupt,continue`); unknown words are ignored so newer relays still work. */
export function parseCapabilities(announced: string): Capability[] {
  const words = announced.split(",").map((word) => word.trim().toLowerCase());
  return CAPABILITIES.filter((capability) => words.includes(capability));
}

/**
 * What the engine may ask of a thread's source on its own (policy interrupts, capacity recovery,
 * resume at reset): what the source can carry out, except that a source that never polled and
 * sends no OpenTelemetry may still get a continue: it waits, harmlessly, for a relay to poll
 * (an unanswered continue turns nothing broken, unlike an unanswered interrupt).
 */
export interface EngineReach {
  interrupt: boolean;
  continue: boolean;
}

export function engineReach(source: SourceReach): EngineReach {
  const control = threadControl(source);
  const plain = source.capabilities === null && source.lastPolledAt === null && source.lastOtlpAt === null;
  return { interrupt: control.interrupt, continue: control.continue || plain };
}

/**
 * The operator's controls on an ended or waiting thread: Resume now on an exhausted, failed or
 * broken thread (or one whose continuation is scheduled: it brings it forward), Retry now on a
 * thread waiting out a backoff. Each needs what the source can carry out.
 */
export function canResumeNow(status: string, control: ThreadControl, resumeAt?: string | null): boolean {
  // A continuation already sent (no time left to wait for) cannot be brought forward.
  if (status === "recovery_scheduled" && resumeAt === null) return false;
  return control.continue && RESUMABLE_STATUSES.includes(status);
}

export function canRetryNow(status: string, control: ThreadControl): boolean {
  return control.interrupt && control.continue && RETRYABLE_NOW_STATUSES.includes(status);
}

export function threadControl(source: SourceReach): ThreadControl {
  if (source.capabilities !== null) {
    const can = parseCapabilities(source.capabilities);
    const interrupt = can.includes("interrupt");
    const resume = can.includes("continue");
    if (interrupt && resume) return { interrupt, continue: resume, why: null };
    if (!interrupt && !resume) return { interrupt, continue: resume, why: WITHOUT_RELAY };
    return {
      interrupt,
      continue: resume,
      why: interrupt ? "Its relay can stop this agent but not continue it (a one-shot process)." : "Its relay can continue this agent but not interrupt it.",
    };
  }
  if (source.lastPolledAt !== null) return { interrupt: true, continue: true, why: null };
  if (source.lastOtlpAt !== null) return { interrupt: false, continue: false, why: BY_OPENTELEMETRY };
  return { interrupt: true, continue: false, why: "Reported without a relay: nothing can resume this agent." };
}
