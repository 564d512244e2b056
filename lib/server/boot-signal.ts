/**
 * When this process's boot (lib/server/boot.ts, run by instrumentation.ts) is done. Next starts
 * the boot as it prepares but waits for it only in its own request handler, so the listener
 * (lib/server/listener/serve.ts), which answers requests without Next, waits for this. Kept on
 * lib/process-state.ts, since the listener and instrumentation.ts are built separately and each has its own
 * copy of this module; it imports nothing, so the listener's bundle takes none of the boot's code.
 */
import { shared } from "@/lib/process-state";

interface BootSignal {
  done: Promise<void>;
  resolve(): void;
}

const sharedForBoot = shared<{ bootSignal?: BootSignal }>("bootSignal", () => ({}));

function signal(): BootSignal {
  if (!sharedForBoot.bootSignal) {
    let resolve!: () => void;
    const done = new Promise<void>((settle) => (resolve = settle));
    sharedForBoot.bootSignal = { done, resolve };
  }
  return sharedForBoot.bootSignal;
}

/** Resolves once the boot is done (a boot that fails ends the process instead). */
export function whenBooted(): Promise<void> {
  return signal().done;
}

/** Called by the boot when it is done. */
export function markBooted(): void {
  signal().resolve();
}
