import { isCodecallError } from '../errors/index.ts';
import type { TaskStatus, TaskRecord } from './task.ts';

/**
 * A task the store cannot read as it was written (a garbled row, a broken journal chain): what is still known of
 * it from the plain columns, and why it is corrupt. Readers skip it and flag it instead of failing for all tasks.
 */
export interface CorruptTask {
  readonly taskId: string;
  readonly tenant: string;
  readonly status: TaskStatus;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** The store's CHECKPOINT_CORRUPT message (which log or column, which seq). */
  readonly message: string;
}

/** The `details` a store's CHECKPOINT_CORRUPT for an undecodable task row carries (see TaskStore.getTask). */
export type CorruptRowDetails = Omit<CorruptTask, 'message'> & {
  readonly log: 'task';
  readonly column: string;
};

/**
 * The corrupt task an error names, or null when it is another error: a CHECKPOINT_CORRUPT of a task row (its
 * details say what is known) or of a log read for `record`.
 */
export function corruptTaskOf(error: unknown, record?: TaskRecord): CorruptTask | null {
  if (!isCodecallError(error) || error.code !== 'CHECKPOINT_CORRUPT') return null;
  const d = error.details as Partial<CorruptRowDetails>;
  const known = record ?? (d.log === 'task' ? d : undefined);
  if (known?.tenant === undefined || known.status === undefined) return null;
  return {
    taskId: record?.id ?? String(d.taskId),
    tenant: known.tenant,
    status: known.status,
    createdAt: known.createdAt ?? '',
    updatedAt: known.updatedAt ?? '',
    message: error.message,
  };
}

/** Whether what `readTaskForView` or `readJournalForView` gave back is the task as corrupt. */
export function isCorruptTask<T extends object>(x: T | CorruptTask): x is CorruptTask {
  return !Array.isArray(x) && 'message' in x && !('input' in x);
}
