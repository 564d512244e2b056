import type { Role } from "./roles";

/**
 * Who is calling: a person signed in with a session, or an API key. `actor` is how audit rows
 * name them — a person's email, or the key's name and whose it is — never a generic name.
 */
export interface Principal {
  kind: "person" | "key";
  /** The person's id, or the key's. */
  id: string;
  role: Role;
  actor: string;
  /** The person (a session's, or the key's owner); null for a service-account key. */
  personId: string | null;
  /** Shown in the navigation. */
  displayName: string;
  /** The session's id, for a person. */
  sessionId: string | null;
}
