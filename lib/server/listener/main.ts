// The server's entry (built by the prepare step into LISTENER_BUNDLE, beside Next's build, so
// the project folder is one level up). The same file is the page renderer's thread (role.ts).
import path from "node:path";
import { pageRendererData } from "./role";

const root = path.resolve(import.meta.dirname, "..");
const renderer = pageRendererData();
if (renderer) await (await import("./render-pages")).renderPages(root, renderer);
else await (await import("./serve")).serve(root);
