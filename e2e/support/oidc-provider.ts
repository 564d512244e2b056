/**
 * A real OpenID Connect provider (the `oidc-provider` package) on 127.0.0.1, for the single
 * sign-on tests: one confidential client whose redirect goes to a radar on a known port, the
 * people it knows with their claims, and the package's own login and consent pages (any password
 * is accepted; the login names the person).
 */
import http from "node:http";
import Provider from "oidc-provider";
import { SSO_CALLBACK_PATH } from "../../lib/auth/sso";
import { freePort } from "../../scripts/lib/port.mjs";

export interface ProviderPerson {
  /** What is typed into the provider's login page. */
  login: string;
  email: string;
  emailVerified: boolean;
  name: string;
  groups: string[];
}

export interface RunningProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The radar's settings for this provider (RADAR_OIDC_ISSUER, _CLIENT_ID, _CLIENT_SECRET). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startOidcProvider(radarUrl: string, people: ProviderPerson[]): Promise<RunningProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = "retry-radar";
  const clientSecret = `secret-${Math.random().toString(36).slice(2)}`;
  const byLogin = new Map(people.map((p) => [p.login, p]));
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [`${radarUrl}${SSO_CALLBACK_PATH}`],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    // `groups` rides with the profile scope, which the radar asks for.
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "groups"] },
    findAccount: async (_ctx: unknown, sub: string) => {
      const person = byLogin.get(sub);
      if (!person) return undefined;
      return {
        accountId: sub,
        claims: async () => ({ sub, email: person.email, email_verified: person.emailVerified, name: person.name, groups: person.groups }),
      };
    },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: [clientSecret] },
  });
  const server = http.createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    issuer,
    clientId,
    clientSecret,
    env: { RADAR_OIDC_ISSUER: issuer, RADAR_OIDC_CLIENT_ID: clientId, RADAR_OIDC_CLIENT_SECRET: clientSecret },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
