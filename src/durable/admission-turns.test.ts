import { describe, expect, it } from 'vitest';
import type { HostOutcome } from '../spec/index.ts';
import { AdmissionTurns } from './admission-turns.ts';

const done: HostOutcome = { ok: false, error: { code: 'INTERRUPTED', name: 'Error', message: 'x' } };

describe('admission turns', () => {
  it('runs each step after the steps before it started, however long their decisions took', async () => {
    const turns = new AdmissionTurns();
    const order: string[] = [];
    let answer = (): void => undefined;
    const slow = new Promise<void>((resolve) => (answer = resolve));
    const step = (name: string) => () => {
      order.push(name);
      // A step's promise may stay pending (a tool running): the next turn need not wait for it.
      return new Promise<HostOutcome>(() => undefined);
    };
    expect(turns.busy).toBe(false);
    void turns.take(async () => {
      order.push('decide a');
      await slow;
      return step('a');
    });
    void turns.take(() => {
      order.push('decide b');
      return Promise.resolve(step('b'));
    });
    const c = turns.take(() => Promise.resolve(() => Promise.resolve(done)));
    expect(turns.busy).toBe(true);
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual(['decide a']);
    answer();
    expect(await c).toBe(done);
    expect(order).toEqual(['decide a', 'a', 'decide b', 'b']);
    expect(turns.busy).toBe(false);
  });

  it('gives the next turn when a decision fails', async () => {
    const turns = new AdmissionTurns();
    const failed = turns.take(() => Promise.reject(new Error('store down')));
    const next = turns.take(() => Promise.resolve(() => Promise.resolve(done)));
    await expect(failed).rejects.toThrow('store down');
    expect(await next).toBe(done);
  });
});
