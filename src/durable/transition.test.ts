import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CodecallError } from '../errors/index.ts';
import { eventBetween, isTerminal, TASK_TRANSITIONS } from '../spec/index.ts';
import type { TaskEvent, TaskStatus } from '../spec/index.ts';
import { canTransitionTo, transition } from './transition.ts';

const STATUSES: TaskStatus[] = ['pending', 'running', 'paused', 'succeeded', 'failed', 'cancelled'];
const EVENTS: TaskEvent[] = ['start', 'pause', 'resume', 'succeed', 'fail', 'cancel', 'recover'];

describe('transition', () => {
  it('follows the table for legal steps', () => {
    expect(transition('pending', 'start')).toBe('running');
    expect(transition('running', 'pause')).toBe('paused');
    expect(transition('paused', 'resume')).toBe('pending');
    expect(transition('running', 'recover')).toBe('running');
    expect(transition('running', 'succeed')).toBe('succeeded');
  });

  it('throws ILLEGAL_TRANSITION with the status and event', () => {
    let caught: unknown;
    try {
      transition('succeeded', 'start');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CodecallError);
    expect((caught as CodecallError).code).toBe('ILLEGAL_TRANSITION');
    expect((caught as CodecallError).details).toEqual({ status: 'succeeded', event: 'start' });
    expect(() => transition('pending', 'succeed')).toThrow(CodecallError);
    expect(transition('pending', 'pause')).toBe('paused'); // a queued task can be held back
  });

  it('finds the event between two statuses', () => {
    expect(eventBetween('pending', 'running')).toBe('start');
    expect(eventBetween('paused', 'pending')).toBe('resume');
    expect(eventBetween('pending', 'paused')).toBe('pause');
    expect(eventBetween('paused', 'running')).toBeNull();
    expect(canTransitionTo('running', 'failed')).toBe(true);
    expect(canTransitionTo('cancelled', 'pending')).toBe(false);
  });

  it('agrees with the table for every (status, event) pair', () => {
    for (const status of STATUSES) {
      for (const event of EVENTS) {
        const expected = TASK_TRANSITIONS[status][event];
        if (expected === undefined) expect(() => transition(status, event)).toThrow(CodecallError);
        else expect(transition(status, event)).toBe(expected);
      }
    }
  });

  it('never leaves a terminal state and takes only legal steps (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...STATUSES),
        fc.array(fc.constantFrom(...EVENTS), { maxLength: 40 }),
        (start, events) => {
          let status = start;
          for (const event of events) {
            const legal = TASK_TRANSITIONS[status][event];
            let next: TaskStatus;
            try {
              next = transition(status, event);
            } catch (error) {
              expect(legal).toBeUndefined();
              expect((error as CodecallError).code).toBe('ILLEGAL_TRANSITION');
              continue;
            }
            expect(next).toBe(legal);
            expect(isTerminal(status)).toBe(false);
            status = next;
          }
        },
      ),
    );
  });
});
