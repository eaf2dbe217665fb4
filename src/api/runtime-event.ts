import type { JournalEntry, LogLevel, PauseReason, TaskStatus } from '../spec/index.ts';

/** What a task's subscribers see: status changes, the guest's console lines, and journal entries as written. */
export type RuntimeEvent =
  | {
      readonly type: 'status';
      readonly taskId: string;
      readonly status: TaskStatus;
      readonly pauseReason: PauseReason | null;
    }
  | { readonly type: 'log'; readonly taskId: string; readonly level: LogLevel; readonly message: string }
  | { readonly type: 'journal'; readonly taskId: string; readonly entries: readonly JournalEntry[] };
