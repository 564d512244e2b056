"use client";

import { useActionState, useId } from "react";
import { ROLES } from "@/lib/auth/roles";
import { addApiKey } from "@/lib/actions/create-api-key";
import { addPerson } from "@/lib/actions/create-person";
import { disablePerson } from "@/lib/actions/disable-person";
import { enablePerson } from "@/lib/actions/enable-person";
import { revokeApiKey } from "@/lib/actions/revoke-api-key";
import { setPersonRole } from "@/lib/actions/set-person-role";
import { unlockPerson, unlockSignInAddress } from "@/lib/actions/unlock-person";
import type { ApiKeyOverview, PersonOverview, SignInAddressOverview } from "@/lib/wire/types";
import { useSignedIn } from "@/components/layout/signed-in";
import { Timestamp } from "@/components/time/timestamp";
import { ActionOutcome } from "@/components/ui/action-outcome";
import { Field, styles } from "@/components/ui/controls";

export function PeopleView({ people, keys, addresses, me }: { people: PersonOverview[]; keys: ApiKeyOverview[]; addresses: SignInAddressOverview[]; me: string | null }) {
  return (
    <div className="space-y-8">
      <section aria-labelledby="people-heading" className="space-y-4">
        <h1 id="people-heading" className="text-2xl font-semibold tracking-tight">People</h1>
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
          <table className="min-w-full text-sm" data-testid="people-table">
            <thead className={styles.thead}>
              <tr>
                <th scope="col" className={styles.th}>Email</th>
                <th scope="col" className={styles.th}>Name</th>
                <th scope="col" className={styles.th}>Role</th>
                <th scope="col" className={styles.th}>State</th>
                <th scope="col" className={styles.th}>Created</th>
                <th scope="col" className={styles.th}>Sign-in lockout</th>
                <th scope="col" className={styles.th}><span className="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {people.map((person) => <PersonRow key={person.id} person={person} isMe={person.id === me} />)}
            </tbody>
          </table>
        </div>
        <LockedAddresses addresses={addresses} />
        <AddPerson />
      </section>
      <ApiKeys keys={keys} />
    </div>
  );
}

function PersonRow({ person, isMe }: { person: PersonOverview; isMe: boolean }) {
  const [roleState, saveRole, savingRole] = useActionState(setPersonRole, null);
  const [disableState, disable, disabling] = useActionState(disablePerson, null);
  const [enableState, enable, enabling] = useActionState(enablePerson, null);
  const [unlockState, unlockIt, unlocking] = useActionState(unlockPerson, null);
  const pending = savingRole || disabling || enabling || unlocking;
  const roleId = useId();
  return (
    <tr data-testid="person-row" data-email={person.email} data-role={person.role} data-state={person.disabled ? "disabled" : "active"}>
      <td className={styles.td + " font-medium"}>{person.email}{isMe && <span className="ml-1 text-xs text-slate-500">(you)</span>}</td>
      <td className={styles.td}>{person.name}</td>
      <td className={styles.td}>
        {/* Keyed by the stored role: after a save the select shows what the server kept. */}
        <form key={person.role} action={saveRole} className="flex items-center gap-2">
          <input type="hidden" name="personId" value={person.id} />
          <label htmlFor={roleId} className="sr-only">Role of {person.email}</label>
          <select id={roleId} name="role" defaultValue={person.role} className={styles.control} data-testid="person-role">
            {ROLES.map((role) => <option key={role} value={role}>{role}</option>)}
          </select>
          <button type="submit" disabled={pending} className={styles.rowButton} data-testid="person-role-save">Save</button>
        </form>
        <ActionOutcome state={roleState} testId="people-error" />
      </td>
      <td className={styles.td} data-testid="person-state">{person.disabled ? "disabled" : "active"}</td>
      <td className={styles.td}><Timestamp iso={person.createdAt} /></td>
      <td className={styles.td} data-testid="person-lockout">
        {person.lockedUntil ? <>locked until <Timestamp iso={person.lockedUntil} /> ({person.failures} recent failures)</> : person.failures > 0 ? `${person.failures} recent failures` : "—"}
      </td>
      <td className={styles.td + " space-y-1 text-right"}>
        <div className="flex justify-end gap-2">
          {person.lockedUntil && (
            <form action={unlockIt}>
              <input type="hidden" name="personId" value={person.id} />
              <button type="submit" disabled={pending} className={styles.rowButton} data-testid="person-unlock">Unlock</button>
            </form>
          )}
          {person.disabled ? (
            <form action={enable}>
              <input type="hidden" name="personId" value={person.id} />
              <button type="submit" disabled={pending} className={styles.rowButton} data-testid="person-enable">Enable</button>
            </form>
          ) : (
            <form action={disable}>
              <input type="hidden" name="personId" value={person.id} />
              <button type="submit" disabled={pending} className={styles.rowDangerButton} data-testid="person-disable">Disable</button>
            </form>
          )}
        </div>
        <ActionOutcome state={disableState ?? enableState ?? unlockState} testId="people-error" />
      </td>
    </tr>
  );
}

/** Client addresses held back by failed sign-ins (everyone behind one NAT shares one): the admin can clear them. */
function LockedAddresses({ addresses }: { addresses: SignInAddressOverview[] }) {
  const [cleared, clear, clearing] = useActionState(unlockSignInAddress, null);
  if (addresses.length === 0 && !cleared) return null;
  return (
    <div className="space-y-2" data-testid="locked-addresses">
      <h2 className="text-base font-semibold">Addresses held back by failed sign-ins</h2>
      <ul className="divide-y divide-slate-100 rounded-lg border border-slate-200 bg-white text-sm shadow-sm">
        {addresses.map((a) => (
          <li key={a.address} data-testid="locked-address" data-address={a.address} className="flex items-center justify-between gap-3 px-3 py-2">
            <span><code>{a.address}</code>: {a.failures} recent failures, locked until <Timestamp iso={a.lockedUntil} /></span>
            <form action={clear}>
              <input type="hidden" name="address" value={a.address} />
              <button type="submit" disabled={clearing} className={styles.rowButton} data-testid="address-unlock">Unlock</button>
            </form>
          </li>
        ))}
      </ul>
      <ActionOutcome state={cleared} testId="people-error" />
    </div>
  );
}

function AddPerson() {
  const [added, add, pending] = useActionState(addPerson, null);
  return (
    <div className="space-y-3">
      {added?.ok && (
        <div role="status" data-testid="person-added" className="space-y-1 rounded-lg border border-emerald-300 bg-emerald-50 p-4 text-sm">
          <p className="font-medium">Added {added.email} as {added.role}.</p>
          {added.generatedPassword && (
            <>
              <p>Their first password — hand it on now, it is not shown again:</p>
              <code data-testid="generated-password" className="block break-all rounded bg-white p-2 font-mono">{added.generatedPassword}</code>
            </>
          )}
        </div>
      )}
      <form action={add} aria-label="Add a person" className="flex flex-wrap items-end gap-3 rounded-lg border border-dashed border-slate-300 bg-white p-4">
        <Field label="Email">
          <input name="email" type="email" required maxLength={200} className={styles.control} data-testid="new-person-email" />
        </Field>
        <Field label="Name (optional)">
          <input name="name" maxLength={100} className={styles.control} data-testid="new-person-name" />
        </Field>
        <Field label="Role">
          <select name="role" defaultValue="viewer" className={styles.control} data-testid="new-person-role">
            {ROLES.map((role) => <option key={role} value={role}>{role}</option>)}
          </select>
        </Field>
        <Field label="First password (empty: generate one)">
          <input name="password" type="password" autoComplete="new-password" maxLength={200} className={styles.control} data-testid="new-person-password" />
        </Field>
        <button type="submit" disabled={pending} className={styles.primaryButton} data-testid="new-person-submit">Add person</button>
      </form>
      <ActionOutcome state={added} testId="people-error" />
    </div>
  );
}

function ApiKeys({ keys }: { keys: ApiKeyOverview[] }) {
  const [created, create, creating] = useActionState(addApiKey, null);
  const [revoked, revoke, revoking] = useActionState(revokeApiKey, null);
  const signedIn = useSignedIn();
  // A key never exceeds its owner's role: offer only those.
  const roles = ROLES.slice(0, signedIn ? ROLES.indexOf(signedIn.role) + 1 : 1);
  return (
    <section aria-labelledby="keys-heading" className="space-y-4">
      <h2 id="keys-heading" className="text-xl font-semibold tracking-tight">API keys</h2>
      <p className="text-sm text-slate-600">
        For scripts, scrapers and automation: <code>Authorization: Bearer &lt;key&gt;</code>. A key acts with its role, never more than its
        owner&apos;s, and stops working when its owner is disabled.
      </p>
      {created?.ok && (
        <div role="status" data-testid="new-api-key" className="space-y-1 rounded-lg border border-amber-300 bg-amber-50 p-4">
          <p className="font-medium">New API key {created.name} ({created.role}) — copy it now, it is not shown again:</p>
          <code className="block break-all rounded bg-white p-2 font-mono text-sm">{created.key}</code>
        </div>
      )}
      <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
        <table className="min-w-full text-sm" data-testid="api-keys-table">
          <thead className={styles.thead}>
            <tr>
              <th scope="col" className={styles.th}>Name</th>
              <th scope="col" className={styles.th}>Role</th>
              <th scope="col" className={styles.th}>Key</th>
              <th scope="col" className={styles.th}>Owner</th>
              <th scope="col" className={styles.th}>Created</th>
              <th scope="col" className={styles.th}>Last used</th>
              <th scope="col" className={styles.th}>State</th>
              <th scope="col" className={styles.th}><span className="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {keys.length === 0 && (
              <tr><td colSpan={8} className={styles.td + " text-slate-600"}>No API keys yet.</td></tr>
            )}
            {keys.map((key) => (
              <tr key={key.id} data-testid="api-key-row" data-name={key.name}>
                <td className={styles.td + " font-medium"}>{key.name}</td>
                <td className={styles.td}>{key.role}</td>
                <td className={styles.td + " font-mono"}>{key.prefix}…</td>
                <td className={styles.td}>{key.owner ?? "service account"}</td>
                <td className={styles.td}><Timestamp iso={key.createdAt} /></td>
                <td className={styles.td}>{key.lastUsedAt ? <Timestamp iso={key.lastUsedAt} /> : "never"}</td>
                <td className={styles.td} data-testid="api-key-state">{key.revokedAt ? <>revoked <Timestamp iso={key.revokedAt} /></> : "active"}</td>
                <td className={styles.td + " text-right"}>
                  {!key.revokedAt && (
                    <form action={revoke}>
                      <input type="hidden" name="keyId" value={key.id} />
                      <button type="submit" disabled={revoking} className={styles.rowDangerButton} aria-label={`Revoke ${key.name}`}>Revoke</button>
                    </form>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ActionOutcome state={revoked} testId="people-error" />
      <form action={create} aria-label="Create an API key" className="flex flex-wrap items-end gap-3 rounded-lg border border-dashed border-slate-300 bg-white p-4">
        <Field label="Key name">
          <input name="name" required maxLength={64} placeholder="e.g. prometheus" className={styles.control} data-testid="new-key-name" />
        </Field>
        <Field label="Role">
          <select name="role" defaultValue="viewer" className={styles.control} data-testid="new-key-role">
            {roles.map((role) => <option key={role} value={role}>{role}</option>)}
          </select>
        </Field>
        <button type="submit" disabled={creating} className={styles.primaryButton} data-testid="new-key-submit">Create API key</button>
      </form>
      <ActionOutcome state={created} testId="people-error" />
    </section>
  );
}
