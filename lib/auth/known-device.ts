import crypto from "node:crypto";
import { parseCookies } from "better-auth/cookies";
import { publicUrl } from "@/lib/config";

/**
 * The "known device" cookie: a browser that signed in with a password gets one, naming a random
 * device id and when it was issued, signed (HMAC-SHA256) with the authentication secret together
 * with the person's email, and valid for KNOWN_DEVICE_MS. A sign-in of that email from a browser
 * carrying a valid one is judged only by that browser's own failures of the account
 * (lib/auth/lockout.ts), so guesses from anywhere else, however many, cannot lock a person out of
 * the browser they use. The email is in the signature, not the cookie: a cookie made for one
 * person is worth nothing for another. One cookie per browser, of the last person signed in.
 */
export const KNOWN_DEVICE_COOKIE = "radar.known_device";
export const KNOWN_DEVICE_MS = 30 * 24 * 3_600_000;

function tag(secret: string, email: string, device: string, issued: number): Buffer {
  return crypto.createHmac("sha256", secret).update(`radar known device\n${email}\n${device}\n${issued}`).digest();
}

/** A new cookie value for `email`, issued at `now`. */
export function newKnownDevice(secret: string, email: string, now: number): string {
  const device = crypto.randomBytes(16).toString("base64url");
  return `${device}.${now}.${tag(secret, email, device, now).toString("base64url")}`;
}

/** The device id of the request's cookie when it is valid for `email` at `now`, else null. */
export function knownDevice(headers: Headers, secret: string, email: string, now: number): string | null {
  const value = parseCookies(headers.get("cookie") ?? "").get(KNOWN_DEVICE_COOKIE);
  const match = value === undefined ? null : /^([\w-]{22})\.(\d{1,15})\.([\w-]{43})$/.exec(value);
  if (!match) return null;
  const [, device, issuedText, signature] = match;
  const issued = Number(issuedText);
  if (issued > now || now - issued >= KNOWN_DEVICE_MS) return null;
  return crypto.timingSafeEqual(Buffer.from(signature, "base64url"), tag(secret, email, device, issued)) ? device : null;
}

/** How the cookie is set: script cannot read it, Secure when the public URL is https, sent on top-level navigation only. */
export function knownDeviceCookieOptions() {
  return { httpOnly: true, secure: publicUrl().startsWith("https:"), sameSite: "lax" as const, path: "/", maxAge: KNOWN_DEVICE_MS / 1000 };
}
