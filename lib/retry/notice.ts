/**
 * Codex marks a retry notice only in text: "Reconnecting... n/m" at the start of the message
 * (app-server `error` with willRetry, and every `codex exec --json` retry line).
 */
const RECONNECTING = /^\s*Reconnecting\.{0,3}\s*(\d+)\s*\/\s*(\d+)/i;

export interface ReconnectNotice {
  attempt: number;
  maxAttempts: number;
}

export function parseReconnectNotice(message: string | null | undefined): ReconnectNotice | null {
  if (!message) return null;
  const match = RECONNECTING.exec(message);
  if (!match) return null;
  const attempt = Number(match[1]);
  const maxAttempts = Number(match[2]);
  if (!Number.isSafeInteger(attempt) || !Number.isSafeInteger(maxAttempts) || attempt < 1) return null;
  return { attempt, maxAttempts };
}
