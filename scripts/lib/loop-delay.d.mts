/** A gap's own work at most: the gap less the larger of the time the thread sat idle and the time it waited for a core. */
export function ownWorkMs(gapMs: number, idleMs: number, waitedMs: number): number;
