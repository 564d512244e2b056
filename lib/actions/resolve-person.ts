import { personById, type PersonRecord } from "@/lib/db/people";
import { fail, type ActionFailure } from "./safe-action";

/** The person a People page action names, or a refusal. */
export async function resolvePerson({ personId }: { personId: string }): Promise<PersonRecord | ActionFailure> {
  return (await personById(personId)) ?? fail("No such person.");
}
