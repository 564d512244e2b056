export function aptInstall(pkg: string, purpose: string): boolean;
