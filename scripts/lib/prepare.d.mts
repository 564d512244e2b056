export const root: string;
export function log(message: string): void;
export function prepare(): void;
export function ensureInstalled(): boolean;
export function ensureGenerated(): boolean;
export function ensureBuilt(): boolean;
export function run(command: string, args: string[], options?: object): unknown;
