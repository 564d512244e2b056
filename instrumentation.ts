// Next.js calls register() once when the server starts: open and migrate the database, create
// the first source, and start the deadline watchdog. Node runtime only (better-sqlite3). Not on
// the page renderer's thread (lib/server/listener/role.ts): the listener's thread did all that.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { isPageRenderer } = await import("./lib/server/listener/role");
  if (isPageRenderer()) return;
  const { boot } = await import("./lib/server/boot");
  await boot();
}
