// Next.js calls register() once when the server starts: open and migrate the database, create
// the first source, and start the deadline watchdog. Node runtime only (better-sqlite3).
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { boot } = await import("./lib/server/boot");
  await boot();
}
