// The server's entry (built by the prepare step into LISTENER_BUNDLE, beside Next's build, so
// the project folder is one level up). The same file is the page renderer's thread and the WAL
// checkpointer's (role.ts).
import path from "node:path";
import { parentPort } from "node:worker_threads";
import { pageRendererData, walCheckpointerData } from "./role";

const root = path.resolve(import.meta.dirname, "..");
const renderer = pageRendererData();
const checkpointer = walCheckpointerData();
if (renderer) await (await import("./render-pages")).renderPages(root, renderer);
else if (checkpointer) (await import("@/lib/db/checkpointer")).runCheckpointer(checkpointer.file, checkpointer.everyMs, parentPort!);
else await (await import("./serve")).serve(root);
