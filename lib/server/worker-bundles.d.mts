export const READ_WORKER_ENTRY: string;
export const READ_WORKER_BUNDLE: string;
export const CHECKPOINTER_ENTRY: string;
export const CHECKPOINTER_BUNDLE: string;
