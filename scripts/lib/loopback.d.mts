/** Whether a listening interface (HOST) is reachable from this machine only. */
export function isLoopbackInterface(host: string): boolean;
/** Whether HOST means every interface (then loopback is one of them). */
export function isWildcardInterface(host: string): boolean;
