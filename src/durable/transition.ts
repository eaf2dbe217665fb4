import { CodecallError } from '../errors/index.ts';
import { eventBetween, TASK_TRANSITIONS } from '../spec/index.ts';
import type { TaskEvent, TaskStatus } from '../spec/index.ts';

/** The status `event` leads to from `from`; ILLEGAL_TRANSITION when the table has no such step. */
export function transition(from: TaskStatus, event: TaskEvent): TaskStatus {
  const to = TASK_TRANSITIONS[from][event];
  if (to === undefined) {
    throw new CodecallError('ILLEGAL_TRANSITION', `A ${from} task cannot ${event}`, {
      details: { status: from, event },
    });
  }
  return to;
}

export function canTransitionTo(from: TaskStatus, to: TaskStatus): boolean {
  return eventBetween(from, to) !== null;
}
