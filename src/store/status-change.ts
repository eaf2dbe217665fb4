import { CodecallError } from '../errors/index.ts';
import { TASK_TRANSITIONS } from '../spec/index.ts';
import type { TaskStatus } from '../spec/index.ts';

/**
 * Checks a requested status change against TASK_TRANSITIONS (the store may not import the durable layer, so it
 * reads the spec table directly). Same status is no change.
 */
export function assertStatusChange(taskId: string, from: TaskStatus, to: TaskStatus): void {
  if (from === to) return;
  const legal = Object.values(TASK_TRANSITIONS[from]).includes(to);
  if (!legal) {
    throw new CodecallError('ILLEGAL_TRANSITION', `Task ${taskId} cannot go from ${from} to ${to}`, {
      details: { taskId, status: from, to },
    });
  }
}
