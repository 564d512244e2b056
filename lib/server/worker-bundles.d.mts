export const READ_WORKER_ENTRY: string;
export const READ_WORKER_BUNDLE: string;
