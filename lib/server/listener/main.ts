// The server's entry (built by the prepare step into LISTENER_BUNDLE, beside Next's build, so
// the project folder is one level up).
import path from "node:path";
import { serve } from "./serve";

await serve(path.resolve(import.meta.dirname, ".."));
