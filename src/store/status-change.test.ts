import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CodecallError } from '../errors/index.ts';
import { eventBetween, isTerminal, TASK_TRANSITIONS } from '../spec/index.ts';
import type { TaskEvent, TaskStatus } from '../spec/index.ts';
import { assertStatusChange } from './status-change.ts';

const STATUSES: TaskStatus[] = ['pending', 'running', 'paused', 'succeeded', 'failed', 'cancelled'];
const EVENTS: TaskEvent[] = ['start', 'pause', 'resume', 'succeed', 'fail', 'cancel', 'recover', 'retry'];

/** The statuses the table leads to from `from`. */
const nextOf = (from: TaskStatus): Set<TaskStatus> => new Set(Object.values(TASK_TRANSITIONS[from]));

function refusal(from: TaskStatus, to: TaskStatus): unknown {
  try {
    assertStatusChange('t1', from, to);
  } catch (error) {
    return error;
  }
  return null;
}

describe('status changes (the store checks each against the spec table)', () => {
  it('allows the steps of the table', () => {
    for (const [from, to] of [
      ['pending', 'running'],
      ['running', 'paused'],
      ['paused', 'pending'],
      ['running', 'succeeded'],
      ['running', 'pending'], // an infrastructure retry
      ['pending', 'paused'], // a queued task can be held back
    ] as const) {
      expect(refusal(from, to)).toBeNull();
    }
  });

  it('refuses any other with ILLEGAL_TRANSITION naming the task and both statuses', () => {
    const error = refusal('succeeded', 'running');
    expect(error).toBeInstanceOf(CodecallError);
    expect((error as CodecallError).code).toBe('ILLEGAL_TRANSITION');
    expect((error as CodecallError).details).toEqual({ taskId: 't1', status: 'succeeded', to: 'running' });
    expect(refusal('pending', 'succeeded')).toBeInstanceOf(CodecallError);
    expect(refusal('paused', 'running')).toBeInstanceOf(CodecallError);
  });

  it('finds the event between two statuses', () => {
    expect(eventBetween('pending', 'running')).toBe('start');
    expect(eventBetween('paused', 'pending')).toBe('resume');
    expect(eventBetween('pending', 'paused')).toBe('pause');
    expect(eventBetween('running', 'pending')).toBe('retry');
    expect(eventBetween('paused', 'running')).toBeNull();
    expect(eventBetween('cancelled', 'pending')).toBeNull();
  });

  it('agrees with the table for every pair of statuses; the same status is no change', () => {
    for (const from of STATUSES) {
      for (const to of STATUSES) {
        const legal = from === to || nextOf(from).has(to);
        expect(refusal(from, to) === null, `${from} -> ${to}`).toBe(legal);
      }
    }
  });

  it('never leaves a terminal status and takes only the steps of the table (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...STATUSES),
        fc.array(fc.constantFrom(...EVENTS), { maxLength: 40 }),
        (start, events) => {
          let status = start;
          for (const event of events) {
            const next = TASK_TRANSITIONS[status][event];
            if (next === undefined) continue;
            expect(isTerminal(status)).toBe(false);
            expect(refusal(status, next)).toBeNull();
            status = next;
          }
          for (const to of STATUSES) {
            if (isTerminal(status) && to !== status)
              expect(refusal(status, to)).toBeInstanceOf(CodecallError);
          }
        },
      ),
    );
  });
});
