import { describe, expect, it } from 'vitest';
import {
  callIdInStep,
  driverCallId,
  formatCallId,
  idempotencyKey,
  idempotencyScope,
  parseCallId,
} from './call-id.ts';
import type { CallId } from './call-id.ts';

describe('CallId', () => {
  it.each<[CallId, string]>([
    [{ n: 1 }, 'call-1'],
    [{ n: 42 }, 'call-42'],
    [{ n: 3, step: 0 }, 's0.call-3'],
    [{ n: 7, step: 12 }, 's12.call-7'],
    [{ n: Number.MAX_SAFE_INTEGER }, `call-${Number.MAX_SAFE_INTEGER}`],
  ])('formats %j as %s and parses it back', (id, text) => {
    expect(formatCallId(id)).toBe(text);
    expect(parseCallId(text)).toEqual(id);
  });

  it.each([
    '',
    'call-',
    'call-0',
    'call-01',
    'call--1',
    'call-1.5',
    'call-1e3',
    ' call-1',
    'call-1 ',
    'Call-1',
    'call-1\n',
    's.call-1',
    's01.call-1',
    's-1.call-1',
    's1call-1',
    's1.s2.call-1',
    's1.',
    '1',
    `call-${Number.MAX_SAFE_INTEGER}0`,
    'task:0:call-1',
  ])('rejects %j', (text) => {
    expect(parseCallId(text)).toBeNull();
  });

  it("names a driver's call in an agent step, and back", () => {
    expect(callIdInStep(2, 'call-5')).toBe('s2.call-5');
    expect(driverCallId(2, 's2.call-5')).toBe('call-5');
    expect(driverCallId(3, 's2.call-5')).toBeNull();
    expect(driverCallId(1, 's12.call-5')).toBeNull();
    expect(driverCallId(2, 'call-5')).toBeNull();
    for (const step of [0, 1, 12]) {
      for (const n of [1, 9, 10]) {
        const journalId = callIdInStep(step, formatCallId({ n }));
        expect(journalId).toBe(formatCallId({ n, step }));
        expect(parseCallId(journalId)).toEqual({ n, step });
        expect(driverCallId(step, journalId)).toBe(formatCallId({ n }));
      }
    }
  });

  it('builds idempotency keys as task:block:call', () => {
    expect(idempotencyKey(idempotencyScope('task_abc', 0), 'call-3')).toBe('task_abc:0:call-3');
    expect(idempotencyKey(idempotencyScope('task_abc', 2), formatCallId({ n: 1 }))).toBe('task_abc:2:call-1');
  });
});
