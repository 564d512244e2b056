import { auth } from "@/lib/auth/better-auth";
import { SSO_CALLBACK_PATH } from "@/lib/auth/sso";
import { problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * The authentication library's HTTP endpoints, limited to the single sign-on callback: signing in
 * with a password, setup and signing out go through server actions, where the lockout and the
 * audit apply, so the library's own sign-in endpoints are not reachable from outside.
 */
export const GET = route({ access: "public" }, async ({ request }) => {
  if (new URL(request.url).pathname !== SSO_CALLBACK_PATH) return problem(404, "Not found", "Sign in on the /sign-in page.");
  return (await auth()).handler(request);
});
