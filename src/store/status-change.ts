import { CodecallError } from '../errors/index.ts';
import { eventBetween } from '../spec/index.ts';
import type { TaskStatus } from '../spec/index.ts';

/** Checks a requested status change against the spec's transition table. Same status is no change. */
export function assertStatusChange(taskId: string, from: TaskStatus, to: TaskStatus): void {
  if (from === to) return;
  if (eventBetween(from, to) === null) {
    throw new CodecallError('ILLEGAL_TRANSITION', `Task ${taskId} cannot go from ${from} to ${to}`, {
      details: { taskId, status: from, to },
    });
  }
}
