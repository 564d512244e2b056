// `npx tsx scripts/bundle-size.ts [/ /insights …]`: the JavaScript a page loads first, gzipped, from the last build.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import vm from "node:vm";
import zlib from "node:zlib";

/**
 * A page's first load: the app's root chunks (build-manifest.json) and the chunks its layouts and
 * page entry need (its client reference manifest), each gzipped at the default level as a server
 * would send it. Chunks loaded later (next/dynamic) are not counted: that is the point of them.
 */
const root = path.resolve(import.meta.dirname, "..");
const next = path.join(root, ".next");

function entryChunks(route: string): string[] {
  const dir = path.join(next, "server", "app", ...route.split("/").filter(Boolean));
  const file = path.join(dir, "page_client-reference-manifest.js");
  const sandbox = { globalThis: {} as { __RSC_MANIFEST?: Record<string, { entryJSFiles: Record<string, string[]> }> } };
  vm.runInNewContext(fs.readFileSync(file, "utf8"), sandbox);
  const manifests = Object.values(sandbox.globalThis.__RSC_MANIFEST ?? {});
  return manifests.flatMap((manifest) => Object.values(manifest.entryJSFiles).flat());
}

export function firstLoadBytes(route: string): { files: number; bytes: number; gzipBytes: number } {
  const build = JSON.parse(fs.readFileSync(path.join(next, "build-manifest.json"), "utf8")) as { rootMainFiles: string[] };
  const files = [...new Set([...build.rootMainFiles, ...entryChunks(route)])];
  let bytes = 0;
  let gzipBytes = 0;
  for (const chunk of files) {
    const content = fs.readFileSync(path.join(next, chunk));
    bytes += content.length;
    gzipBytes += zlib.gzipSync(content).length;
  }
  return { files: files.length, bytes, gzipBytes };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const routes = process.argv.length > 2 ? process.argv.slice(2) : ["/", "/insights"];
  for (const route of routes) {
    const size = firstLoadBytes(route);
    console.log(`${route}: ${size.files} chunks, ${Math.round(size.bytes / 1024)} KB, ${Math.round(size.gzipBytes / 1024)} KB gzipped`);
  }
}
