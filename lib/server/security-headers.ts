/**
 * The response headers that keep the dashboard out of frames and its scripts to its own. No
 * imports: next.config.ts loads this file before the app's module aliases exist.
 */

/** Headers on every response: no framing, no sniffing, no referrer, no shared browsing context. */
export const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ["X-Frame-Options", "DENY"],
  ["X-Content-Type-Options", "nosniff"],
  ["Referrer-Policy", "no-referrer"],
  ["Cross-Origin-Opener-Policy", "same-origin"],
];

export function withSecurityHeaders(response: Response): Response {
  for (const [name, value] of SECURITY_HEADERS) response.headers.set(name, value);
  return response;
}

/** A fresh nonce for one page load (128 random bits). */
export function newNonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
}

/**
 * The pages' Content-Security-Policy. Scripts run only with this load's nonce (Next puts it on
 * its own scripts when it finds it in the request's CSP) and what they load ('strict-dynamic').
 * Styles allow 'unsafe-inline' because React renders `style` attributes (charts, bars, widths),
 * which no nonce can cover; a style cannot run code. Development needs eval for React's
 * debugging aids.
 */
export function contentSecurityPolicy(nonce: string, { development = false } = {}): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${development ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}
