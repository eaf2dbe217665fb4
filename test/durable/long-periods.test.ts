// Issue 17 item 11: a period a caller configures (the poll, the lease and so its renewal) past what one Node timer
// holds (2^31-1 ms) made Node run that interval every 1 ms (TimeoutOverflowWarning): a spin. Periodic timers are
// clamped to one timer (spec's intervalMs); a poll sooner than asked is harmless.
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import { useDurableFixture } from './fixture.ts';

describe('periods past one timer', () => {
  const fx = useDurableFixture('long-periods');

  it('a runtime polling every 2^40 ms with a 2^36 ms lease runs a task, and no timer overflows', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    const runtime = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([]),
      pollMs: 2 ** 40,
      leaseMs: 2 ** 36,
    });
    try {
      runtime.start();
      const task = await runtime.submit({
        code: "await new Promise((r) => setTimeout(r, 50));\nreturn 'done';",
      });
      const view = await runtime.wait(task.task_id, { signal: AbortSignal.timeout(60_000) });
      expect(view.status).toBe('succeeded');
      expect(warnings.filter((w) => w.name === 'TimeoutOverflowWarning').map((w) => w.message)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await runtime.close();
    }
  }, 90_000);
});
