/**
 * How long a test waits for something that will happen before it gives up. Tests wait on
 * observable milestones (a status that lasts, a directive row, a process exit); these bounds only
 * stop a hung test and say nothing about how fast the machine is, so they are generous: a busy
 * CI machine (both cores taken by other work) must never hit them.
 */
export const PATIENCE_MS = 120_000;
/** A test that starts a server, a real agent or a browser flow with several such waits. */
export const TEST_TIMEOUT_MS = 300_000;
