// The server's entry (built by the prepare step into LISTENER_BUNDLE, .radar/build/, so the
// project folder is two levels up).
import path from "node:path";
import { serve } from "./serve";

await serve(path.resolve(import.meta.dirname, "..", ".."));
