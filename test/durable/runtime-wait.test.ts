import { getEventListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import { useDurableFixture } from './fixture.ts';

// runtime.wait polls the store every pollMs until the task settles. Bug: each round added an abort listener to
// the caller's signal and never took it off, so a wait of more than ten rounds on one signal (`codecall mcp`'s
// execute waits up to 50 s at a 250 ms poll) printed MaxListenersExceededWarning and held a listener per round.
describe('runtime.wait on one signal', () => {
  const fx = useDurableFixture('runtime-wait');

  it('keeps at most one abort listener on the signal however many rounds it polls, and none after', async () => {
    const runtime = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([]),
      pollMs: 1,
    });
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(w);
    };
    process.on('warning', onWarning);
    try {
      // Not started: the task stays pending, so the wait polls until the signal ends it.
      const task = await runtime.submit({ code: 'return 1' });
      const stop = new AbortController();
      const waiting = runtime.wait(task.task_id, { signal: stop.signal }).catch((e: unknown) => e);
      let most = 0;
      for (let i = 0; i < 40; i++) {
        await sleep(3);
        most = Math.max(most, getEventListeners(stop.signal, 'abort').length);
      }
      stop.abort();
      const ended = await waiting;
      expect(ended).toMatchObject({ code: 'ABORTED' });
      expect(most).toBe(1); // bug: one more each round (40 rounds of 1 ms here)
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
      await sleep(10); // warnings are emitted on the next tick
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await runtime.close();
    }
  });
});
