// Installs a Debian package with apt-get, as root or through sudo, for what the test machines
// lack and npm cannot bring (a browser, PostgreSQL). Plain JavaScript so `npm test` can use it
// before anything is compiled; apt.d.mts types it for TypeScript.
import { spawnSync } from "node:child_process";
import fs from "node:fs";

/** True when apt-get ran (whether the package then exists is for the caller to check). */
export function aptInstall(pkg, purpose) {
  if (!fs.existsSync("/usr/bin/apt-get")) return false;
  process.stderr.write(`[radar] installing Debian's ${pkg} for ${purpose}\n`);
  const sudo = process.getuid?.() === 0 ? [] : ["sudo"];
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const aptGet = (...args) => spawnSync(sudo[0] ?? "apt-get", [...(sudo.length ? ["apt-get"] : []), ...args], { stdio: "inherit", env });
  aptGet("update");
  aptGet("install", "-y", "--no-install-recommends", pkg);
  return true;
}
