import { deleteSetting } from "@/lib/db/settings";

/**
 * The one-time setup code (lib/auth/people.ts) is for a database without an admin: once an admin
 * exists by any other way (RADAR_ADMIN_EMAIL, the shell, the People page, single sign-on), any
 * outstanding code is voided, so a link printed earlier cannot make another admin later.
 */
export const SETUP_CODE = "setup.code";

export async function voidSetupCodes(): Promise<boolean> {
  return deleteSetting(SETUP_CODE);
}
