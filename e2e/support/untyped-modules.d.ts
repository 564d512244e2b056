// Packages the tests use that ship no type declarations: only what the tests call is declared.

// A real OpenID Connect provider (e2e/support/oidc-provider.ts): its constructor and `callback()`.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}

// React's encoding of a server action's arguments, as the browser sends them (e2e/api/access.test.ts).
declare module "next/dist/compiled/react-server-dom-webpack/client.node.js" {
  export function encodeReply(value: unknown[]): Promise<string | FormData>;
}
