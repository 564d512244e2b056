import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * How a receiver knows an alert came from this radar and is fresh. Each destination has its own
 * secret (shown once, when the destination is saved). A delivery carries
 *
 *   X-Radar-Timestamp: <unix seconds when it was sent>
 *   X-Radar-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret>
 *
 * A receiver recomputes the HMAC over the timestamp, a dot and the raw body bytes, compares in
 * constant time, and refuses a timestamp further than a few minutes from its own clock (a replay
 * of an old delivery then fails even with a valid signature). `verifyAlertSignature` does exactly
 * that and is what the tests use.
 */
export const TIMESTAMP_HEADER = "x-radar-timestamp";
export const SIGNATURE_HEADER = "x-radar-signature";

/** How far a delivery's timestamp may be from the receiver's clock. */
export const SIGNATURE_TOLERANCE_S = 5 * 60;

export function newAlertSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

function digest(secret: string, timestamp: number, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

/** The two headers a delivery of `body` at `nowMs` carries. */
export function signAlert(secret: string, body: string, nowMs: number): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return { [TIMESTAMP_HEADER]: String(timestamp), [SIGNATURE_HEADER]: `v1=${digest(secret, timestamp, body)}` };
}

/** A receiver's check: the signature matches the raw body and the timestamp is recent. */
export function verifyAlertSignature(input: {
  secret: string;
  body: string;
  timestamp: string | null | undefined;
  signature: string | null | undefined;
  nowMs: number;
  toleranceS?: number;
}): boolean {
  const timestamp = Number(input.timestamp);
  if (!input.timestamp || !Number.isInteger(timestamp)) return false;
  if (Math.abs(input.nowMs / 1000 - timestamp) > (input.toleranceS ?? SIGNATURE_TOLERANCE_S)) return false;
  const expected = Buffer.from(`v1=${digest(input.secret, timestamp, input.body)}`);
  // A header may carry several signatures (while a secret is rotated): any one that matches counts.
  return (input.signature ?? "")
    .split(/[,\s]+/)
    .filter(Boolean)
    .some((candidate) => {
      const given = Buffer.from(candidate);
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}
