import type { CorruptTask, TaskStatus } from '../spec/index.ts';
import type { TaskView } from './task-view.ts';

/**
 * A task a list, inbox or stream skipped because the store cannot read it as written: lists carry these in
 * `corrupt`, the tenant stream sends one as a `corrupt` event, and the task's own view has `corrupt` set.
 */
export interface CorruptTaskItem {
  readonly task_id: string;
  readonly tenant: string;
  readonly status: TaskStatus;
  /** CHECKPOINT_CORRUPT: the store's code for a failed check. */
  readonly code: 'CHECKPOINT_CORRUPT';
  readonly message: string;
}

export function corruptItem(c: CorruptTask): CorruptTaskItem {
  return {
    task_id: c.taskId,
    tenant: c.tenant,
    status: c.status,
    code: 'CHECKPOINT_CORRUPT',
    message: c.message,
  };
}

/** The list item of a view marked corrupt (its journal or a column of its row is what is broken). */
export function corruptItemOfView(v: TaskView): CorruptTaskItem {
  return {
    task_id: v.task_id,
    tenant: v.tenant,
    status: v.status,
    code: 'CHECKPOINT_CORRUPT',
    message: v.corrupt?.message ?? '',
  };
}
