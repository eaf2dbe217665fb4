// The leaf types of carry-over (ADR 0034), apart so the journal's and the tools' contracts can name them
// without importing carry-over.ts (which reads journals and tools): no import cycle.

/**
 * Where a carried-over call ran: its journal id in `task_id` (absent: the same task, e.g. an earlier agent step).
 * Together they name the call once over every task, so an offer is taken at most once per attempt.
 */
export interface CallOrigin {
  readonly call_id: string;
  readonly task_id?: string;
}

/** What a revision does with a call that another attempt completed with other arguments (ADR 0034). */
export type RevisedCallPolicy = 'pause' | 'run';
