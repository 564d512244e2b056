export const LISTENER_ENTRY: string;
export const LISTENER_BUNDLE: string;
