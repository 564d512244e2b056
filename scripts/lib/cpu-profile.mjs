// Preloaded into the built server by scripts/profile-server.ts (`--import`): a CPU profile of its
// main thread from the first SIGUSR2 (so start-up is left out) to its exit, written as
// main-<pid>.cpuprofile into RADAR_PROFILE_DIR. Node refuses --cpu-prof in NODE_OPTIONS.
import fs from "node:fs";
import inspector from "node:inspector";

const dir = process.env.RADAR_PROFILE_DIR;
const session = new inspector.Session();
session.connect();
session.post("Profiler.enable");
session.post("Profiler.setSamplingInterval", { interval: 200 });
let started = false;
process.on("SIGUSR2", () => {
  if (started) return;
  started = true;
  session.post("Profiler.start");
});
process.on("exit", () => {
  if (!started) return;
  // An in-process session answers synchronously, so the file is written before the exit.
  session.post("Profiler.stop", (error, result) => {
    if (!error) fs.writeFileSync(`${dir}/main-${process.pid}.cpuprofile`, JSON.stringify(result.profile));
  });
});
