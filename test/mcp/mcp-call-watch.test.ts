import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { CallWatch } from '../../src/mcp/mcp-call-watch.ts';

// The calls in flight to one server: one listener per task signal, one timer for the oldest call's bound.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('CallWatch', () => {
  it("stops every call under a task's signal when it aborts, with one listener on it", () => {
    const watch = new CallWatch(60_000);
    const task = new AbortController();
    const other = new AbortController();
    const calls = [0, 1, 2].map(() => watch.start(task.signal, () => 'late'));
    const elsewhere = watch.start(other.signal, () => 'late');
    expect(getEventListeners(task.signal, 'abort')).toHaveLength(1);
    task.abort('cancelled');
    for (const c of calls) expect(c.stop.signal.reason).toBe('cancelled');
    expect(elsewhere.stop.signal.aborted).toBe(false);
    // A call that starts after the abort is stopped at once.
    expect(watch.start(task.signal, () => 'late').stop.signal.reason).toBe('cancelled');
    watch.close();
  });

  it('stops each call at its own bound in all, the later ones after the earlier ended', async () => {
    const watch = new CallWatch(150);
    const signal = new AbortController().signal;
    const first = watch.start(signal, () => 'first late');
    await sleep(60);
    const second = watch.start(signal, () => 'second late');
    const ended = watch.start(signal, () => 'never');
    watch.end(ended);
    await sleep(120); // first's bound passed (~180 ms), second's not (~120 ms)
    expect(first.stop.signal.reason).toBe('first late');
    expect(second.stop.signal.aborted).toBe(false);
    await sleep(120);
    expect(second.stop.signal.reason).toBe('second late');
    expect(ended.stop.signal.aborted).toBe(false);
    // A call that starts once none is left arms the timer again.
    const third = watch.start(signal, () => 'third late');
    await sleep(250);
    expect(third.stop.signal.reason).toBe('third late');
    watch.close();
  });

  it('never stops a call that ended before its bound', async () => {
    const watch = new CallWatch(80);
    const signal = new AbortController().signal;
    for (let i = 0; i < 5; i++) {
      const c = watch.start(signal, () => 'late');
      watch.end(c);
      await sleep(30);
      expect(c.stop.signal.aborted).toBe(false);
    }
    await sleep(100);
    watch.close();
  });
});
