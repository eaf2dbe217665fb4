import { CodecallError } from '../errors/index.ts';
import { TASK_TRANSITIONS, TERMINAL_STATUSES } from '../spec/index.ts';
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

/** The first event leading from `from` to `to`, or null when none does. */
export function eventBetween(from: TaskStatus, to: TaskStatus): TaskEvent | null {
  for (const [event, next] of Object.entries(TASK_TRANSITIONS[from])) {
    if (next === to) return event as TaskEvent;
  }
  return null;
}

export function canTransitionTo(from: TaskStatus, to: TaskStatus): boolean {
  return eventBetween(from, to) !== null;
}

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}
