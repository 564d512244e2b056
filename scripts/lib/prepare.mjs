// Shared by `npm start` and `npm test`: make a fresh clone runnable with nothing but Node and npm.
// Each step is skipped when its inputs have not changed since it last ran (content hashes).
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { LISTENER_BUNDLE, LISTENER_ENTRY } from "../../lib/server/listener/bundle.mjs";
import { READ_WORKER_BUNDLE, READ_WORKER_ENTRY } from "../../lib/server/worker-bundles.mjs";

export const root = path.resolve(import.meta.dirname, "..", "..");
const stampDir = path.join(root, "node_modules", ".radar");

export function log(message) {
  process.stderr.write(`[radar] ${message}\n`);
}

export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env: process.env, ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} exited with ${result.status ?? result.signal}`);
  }
  return result;
}

function hashFiles(paths) {
  const hash = crypto.createHash("sha256");
  for (const file of paths) {
    hash.update(path.relative(root, file));
    hash.update("\0");
    hash.update(fs.readFileSync(file));
    hash.update("\0");
  }
  return hash.digest("hex");
}

function walk(dir, out = []) {
  if (!fs.existsSync(dir)) return out;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (!/\.test\.tsx?$/.test(entry.name)) out.push(full);
  }
  return out.sort();
}

function stamp(name) {
  const file = path.join(stampDir, name);
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
}

function writeStamp(name, value) {
  fs.mkdirSync(stampDir, { recursive: true });
  fs.writeFileSync(path.join(stampDir, name), value);
}

/** npm ci when node_modules is missing, npm install when package.json or the lock changed. */
export function ensureInstalled() {
  const inputs = ["package.json", "package-lock.json"].map((f) => path.join(root, f)).filter((f) => fs.existsSync(f));
  const want = hashFiles(inputs);
  const hasModules = fs.existsSync(path.join(root, "node_modules", ".bin", "next"));
  if (hasModules && stamp("install") === want) return false;
  const env = { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1", NEXT_TELEMETRY_DISABLED: "1" };
  const lock = fs.existsSync(path.join(root, "package-lock.json"));
  log(hasModules ? "dependencies changed: npm install" : "installing dependencies (about 2–3 minutes the first time)");
  run("npm", [hasModules || !lock ? "install" : "ci", "--no-audit", "--no-fund"], { env });
  writeStamp("install", hashFiles(inputs));
  // npm's postinstall just generated both Prisma clients.
  writeStamp("generate", hashFiles(PRISMA_SCHEMAS.map((s) => path.join(root, s.schema))));
  return true;
}

/** Each store's Prisma schema and the client generated from it (package.json's postinstall generates both). */
const PRISMA_SCHEMAS = [
  { schema: "prisma/schema.prisma", client: "lib/db/generated/client.ts" },
  { schema: "prisma/postgres/schema.prisma", client: "lib/db/generated-pg/client.ts" },
];

/** The Prisma clients are generated code: regenerate them when a schema changes. */
export function ensureGenerated() {
  const want = hashFiles(PRISMA_SCHEMAS.map((s) => path.join(root, s.schema)));
  if (PRISMA_SCHEMAS.every((s) => fs.existsSync(path.join(root, s.client))) && stamp("generate") === want) return false;
  log("generating the Prisma clients");
  for (const { schema } of PRISMA_SCHEMAS) run(path.join(root, "node_modules", ".bin", "prisma"), ["generate", "--schema", schema]);
  writeStamp("generate", want);
  return true;
}

const BUILD_INPUTS = ["app", "components", "lib"];
const BUILD_FILES = ["next.config.ts", "tsconfig.json", "package-lock.json", "package.json", "instrumentation.ts", "proxy.ts"];

/** `next build` only when a source file changed since the last build. */
export function ensureBuilt() {
  const files = [
    ...BUILD_INPUTS.flatMap((dir) => walk(path.join(root, dir))),
    ...BUILD_FILES.map((f) => path.join(root, f)).filter((f) => fs.existsSync(f)),
  ];
  const want = hashFiles(files);
  const marker = path.join(root, ".next", "radar-build-hash");
  if (fs.existsSync(path.join(root, ".next", "BUILD_ID")) && fs.existsSync(marker) && fs.readFileSync(marker, "utf8") === want) {
    if (BUNDLES.every(([, outfile]) => fs.existsSync(path.join(root, outfile)))) return false;
    buildBundles();
    return true;
  }
  log("building the dashboard (about 20–40 s)");
  run(path.join(root, "node_modules", ".bin", "next"), ["build"], {
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  buildBundles();
  fs.writeFileSync(marker, want);
  return true;
}

/**
 * What runs out of Next's sight, each bundled by esbuild (which tsx brings) into one file in the
 * project's own build folder (.radar/build: Next's build output is Next's alone), leaving native addons, Prisma's runtime and Next to node_modules: the read worker
 * (lib/db/read-worker.ts), a thread of the server; and the server itself, the ingestion listener
 * in front of Next (lib/server/listener), which `npm start` and the test server run.
 */
const BUNDLES = [
  [READ_WORKER_ENTRY, READ_WORKER_BUNDLE],
  [LISTENER_ENTRY, LISTENER_BUNDLE],
];

function buildBundles() {
  for (const [entry, outfile] of BUNDLES) {
    run(path.join(root, "node_modules", ".bin", "esbuild"), [
      entry,
      "--bundle",
      "--platform=node",
      "--format=esm",
      "--target=node20",
      "--external:better-sqlite3",
      "--external:@prisma/*",
      "--external:next",
      `--outfile=${outfile}`,
      "--log-level=warning",
      // Bundled CommonJS may require() Node's own modules, which an ES module cannot without this.
      '--banner:js=import { createRequire } from "node:module"; const require = createRequire(import.meta.url);',
    ]);
  }
}

export function prepare() {
  ensureInstalled();
  ensureGenerated();
  ensureBuilt();
}
