import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { intervalMs, longSleep, longTimeout, deadlineSignal, MAX_TIMER_MS } from './long-timeout.ts';

describe('longTimeout', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([MAX_TIMER_MS + 1, 2 ** 32, 2 ** 32 + 5, 2 ** 40, 3 * MAX_TIMER_MS])(
    'fires a delay of %d ms at that time, not before',
    (ms) => {
      const fn = vi.fn();
      longTimeout(fn, ms);
      vi.advanceTimersByTime(ms - 1);
      expect(fn).not.toHaveBeenCalled();
      vi.advanceTimersByTime(1);
      expect(fn).toHaveBeenCalledTimes(1);
    },
  );

  it('keeps a short delay as setTimeout does; NaN and negative delays are 0', () => {
    const fns = [vi.fn(), vi.fn(), vi.fn()];
    longTimeout(fns[0]!, 50);
    longTimeout(fns[1]!, Number.NaN);
    longTimeout(fns[2]!, -5);
    vi.advanceTimersByTime(0);
    expect(fns.map((f) => f.mock.calls.length)).toEqual([0, 1, 1]);
    vi.advanceTimersByTime(50);
    expect(fns[0]).toHaveBeenCalledTimes(1);
  });

  it('never fires Infinity or the largest number', () => {
    const fn = vi.fn();
    longTimeout(fn, Infinity);
    longTimeout(fn, Number.MAX_VALUE);
    for (let i = 0; i < 50; i++) vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(fn).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(2);
  });

  it('clear() and an aborted signal stop it at any step', () => {
    const fn = vi.fn();
    const cleared = longTimeout(fn, 2 ** 33);
    const controller = new AbortController();
    longTimeout(fn, 2 ** 33, { signal: controller.signal });
    vi.advanceTimersByTime(2 ** 32);
    cleared.clear();
    controller.abort();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(2 ** 34);
    expect(fn).not.toHaveBeenCalled();
    longTimeout(fn, 10, { signal: controller.signal });
    vi.advanceTimersByTime(20);
    expect(fn).not.toHaveBeenCalled();
  });

  it('longSleep resolves at its time or when aborted', async () => {
    let slept = false;
    void longSleep(2 ** 31).then(() => (slept = true));
    await vi.advanceTimersByTimeAsync(2 ** 31 - 1);
    expect(slept).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(slept).toBe(true);
    const controller = new AbortController();
    const aborted = longSleep(Infinity, controller.signal);
    controller.abort();
    await aborted;
    expect(vi.getTimerCount()).toBe(0);
  });

  it('deadlineSignal aborts with a TimeoutError at its time, past what AbortSignal.timeout holds', () => {
    const { signal } = deadlineSignal(2 ** 32 + 5);
    vi.advanceTimersByTime(2 ** 32 + 4);
    expect(signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('deadlineSignal follows its outer signal, and release() drops its timer and its listener', () => {
    const outer = new AbortController();
    const one = deadlineSignal(1000, outer.signal);
    one.release();
    expect(vi.getTimerCount()).toBe(0);
    const two = deadlineSignal(1000, outer.signal);
    outer.abort(new Error('stop'));
    expect(two.signal.aborted).toBe(true);
    expect(one.signal.aborted).toBe(false);
    two.release();
  });

  it('intervalMs keeps a periodic delay within one timer', () => {
    expect([
      intervalMs(50),
      intervalMs(2 ** 40),
      intervalMs(Infinity),
      intervalMs(-1),
      intervalMs(Number.NaN),
    ]).toEqual([50, MAX_TIMER_MS, MAX_TIMER_MS, 0, 0]);
  });
});
