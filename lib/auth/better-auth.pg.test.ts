import { describe, expect, it } from "vitest";
import { STORES, useStore } from "@/e2e/support/both-stores";
import { personByEmail } from "@/lib/db/people";
import { readSetting } from "@/lib/db/settings";
import { storePrisma } from "@/lib/db/store-prisma";
import { auth } from "./better-auth";
import { createPerson } from "./people";

describe.each(STORES)("the authentication library on %s", (store) => {
  useStore(store);

  it("keeps its secret in the store, creates a person, and signs them in with a session there", async () => {
    const person = await createPerson({ email: "Ada@Example.com", name: "Ada", password: "correct horse battery", role: "operator" });
    expect(person).toMatchObject({ email: "ada@example.com", role: "operator", disabled: false });
    expect(await readSetting("auth.secret")).toMatch(/^[\w-]{40,}$/);
    const api = (await auth()).api;
    const signedIn = await api.signInEmail({ body: { email: "ada@example.com", password: "correct horse battery" }, returnHeaders: true });
    expect(signedIn.response.user.id).toBe(person.id);
    const cookie = signedIn.headers.get("set-cookie")!.split(";")[0];
    const session = await api.getSession({ headers: new Headers({ cookie }) });
    expect(session?.user.email).toBe("ada@example.com");
    // In this store's tables, not the other's.
    expect(await storePrisma().prisma.session.count({ where: { userId: person.id } })).toBe(1);
    await expect(api.signInEmail({ body: { email: "ada@example.com", password: "wrong password!" } })).rejects.toThrow();
    expect((await personByEmail("ada@example.com"))?.id).toBe(person.id);
  });
});
