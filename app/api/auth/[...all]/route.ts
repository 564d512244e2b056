import { auth } from "@/lib/auth/better-auth";
import { problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * The authentication library's HTTP endpoints, limited to the single sign-on callback: signing in
 * with a password, setup and signing out go through server actions, where the lockout and the
 * audit apply, so the library's own sign-in endpoints are not reachable from outside.
 */
const CALLBACK = /^\/api\/auth\/oauth2\/callback\/[A-Za-z0-9_-]+$/;

export const GET = route({ access: "public" }, async ({ request }) => {
  if (!CALLBACK.test(new URL(request.url).pathname)) return problem(404, "Not found", "Sign in on the /sign-in page.");
  return (await auth()).handler(request);
});
