import crypto from "node:crypto";
import { prismaAdapter } from "@better-auth/prisma-adapter";
import { betterAuth } from "better-auth";
import { nextCookies } from "better-auth/next-js";
import { admin, genericOAuth } from "better-auth/plugins";
import { config, oidcSettings, publicUrl } from "@/lib/config";
import { recordAudit } from "@/lib/db/audit";
import { personById } from "@/lib/db/people";
import { settingOrCreate } from "@/lib/db/settings";
import { storePrisma } from "@/lib/db/store-prisma";
import type { Role } from "./roles";
import { voidSetupCodes } from "./setup-code";
import { OIDC_PROVIDER_ID, roleForClaims } from "./sso";
import { shared } from "@/lib/process-state";


/**
 * The authentication library (Better Auth, through its Prisma adapter): password hashing,
 * sessions and their cookies, and OpenID Connect sign-in. Retry Radar builds on it and never
 * handles session cryptography or password hashes itself. Its secret is generated on first start
 * and kept in the database, so sessions survive restarts and every instance shares it.
 */
/** The library's own path (under /api/auth) of the callback, as its hooks see it. */
const isSsoCallback = (path: string | undefined) => path?.startsWith("/callback/") ?? false;
const SECRET_SETTING = "auth.secret";
const HOUR_S = 3600;

function build(secret: string) {
  const c = config();
  const base = publicUrl(c);
  const sso = oidcSettings(c);
  const idle = Math.round(c.RADAR_SESSION_IDLE_HOURS * HOUR_S);
  // The role a first-time SSO person's claims give, by email, from reading the profile to creating
  // the person within one callback: the library drops `role` from a mapped profile (the admin
  // plugin declares it not settable from input), so the user-creation hook sets it.
  const ssoRoles = new Map<string, Role>();
  const { prisma, provider } = storePrisma();
  return betterAuth({
    appName: "Retry Radar",
    baseURL: base,
    basePath: "/api/auth",
    secret,
    database: prismaAdapter(prisma, { provider }),
    telemetry: { enabled: false },
    // Sign-in attempts are limited by lib/auth/sign-in.ts (per account and address, in the database).
    rateLimit: { enabled: false },
    trustedOrigins: allowedOrigins(),
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 10, maxPasswordLength: 256 },
    // Idle expiry: a session is extended while used (at most every `updateAge`) and ends when
    // unused for `expiresIn`. The absolute lifetime is checked by lib/server/auth.ts.
    session: { expiresIn: idle, updateAge: Math.min(HOUR_S, Math.max(60, Math.floor(idle / 4))) },
    // An SSO identity joins an existing person only when the provider says the email is verified.
    // People made here have no mailbox check of their own (an admin typed the address), so the
    // provider's verification is the one that counts.
    account: { accountLinking: { enabled: true, trustedProviders: [], requireLocalEmailVerified: false } },
    databaseHooks: {
      user: {
        create: {
          // However an admin comes to exist (RADAR_ADMIN_EMAIL, the shell, the People page, single
          // sign-on), an outstanding setup link stops working: voided before the admin is written,
          // so a setup completing meanwhile (which holds the code's row) is waited for, and no
          // admin lands while it is in flight (lib/auth/people.ts completeSetup).
          before: async (user, context) => {
            if (!isSsoCallback(context?.path)) {
              if ((user as { role?: unknown }).role === "admin") await voidSetupCodes();
              return;
            }
            const email = String(user.email).toLowerCase();
            const role = ssoRoles.get(email) ?? "viewer";
            ssoRoles.delete(email);
            if (role === "admin") await voidSetupCodes();
            return { data: { ...user, role } };
          },
        },
      },
      session: {
        create: {
          // Password sign-ins are audited by lib/auth/people.ts; single sign-on completes here.
          after: async (session, context) => {
            if (!isSsoCallback(context?.path)) return;
            const person = await personById(session.userId);
            await recordAudit({ at: Date.now(), actor: person?.email ?? session.userId, action: "sign-in", result: "ok", detail: `single sign-on; role ${person?.role ?? "unknown"}` });
          },
        },
      },
    },
    advanced: { useSecureCookies: base.startsWith("https:"), cookiePrefix: "radar", defaultCookieAttributes: { sameSite: "lax", httpOnly: true } },
    plugins: [
      admin({ defaultRole: "viewer", adminRoles: ["admin"] }),
      ...(sso
        ? [
            genericOAuth({
              config: [
                {
                  providerId: OIDC_PROVIDER_ID,
                  discoveryUrl: `${sso.issuer}/.well-known/openid-configuration`,
                  clientId: sso.clientId,
                  clientSecret: sso.clientSecret,
                  scopes: ["openid", "email", "profile"],
                  pkce: true,
                  // The role a first-time SSO person gets (set when the person is created, above);
                  // later changes are an admin's.
                  mapProfileToUser: (profile) => {
                    if (typeof profile.email === "string") ssoRoles.set(profile.email.toLowerCase(), roleForClaims(profile as Record<string, unknown>, sso));
                    return {};
                  },
                },
              ],
            }),
          ]
        : []),
      // Lets server actions set and clear the session cookie (must be the last plugin).
      nextCookies(),
    ],
  });
}

export type Auth = ReturnType<typeof build>;

const sharedForAuth = shared<{ auth?: { url: string; auth: Promise<Auth> } }>("auth", () => ({}));

/** The process's authentication, built on first use with the stored secret (again for another database, as in a test). */
export function auth(): Promise<Auth> {
  const url = config().DATABASE_URL;
  if (sharedForAuth.auth?.url !== url) {
    sharedForAuth.auth = { url, auth: settingOrCreate(SECRET_SETTING, () => crypto.randomBytes(32).toString("base64url")).then(build) };
  }
  return sharedForAuth.auth.auth;
}

/** The origins a browser may send state-changing requests from: loopback on this port and the public URL. */
export function allowedOrigins(): string[] {
  const c = config();
  const origins = [`http://127.0.0.1:${c.PORT}`, `http://localhost:${c.PORT}`, `http://[::1]:${c.PORT}`];
  if (c.RADAR_PUBLIC_URL) origins.push(c.RADAR_PUBLIC_URL);
  return origins;
}
