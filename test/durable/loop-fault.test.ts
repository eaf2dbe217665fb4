import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { CodecallError } from '../../src/errors/index.ts';
import { liveness } from '../../src/http/health-routes.ts';
import { ToolRegistry } from '../../src/index.ts';
import { useDurableFixture } from './fixture.ts';

// The scheduler's loop swallowed every failure of its rounds ("a busy store: the next poll tries again"), so a
// store that refused every claim left tasks pending for ever and nothing said why. Now a round that fails twice in
// a row is logged once (again when the message changes, or every 5 minutes), the runtime's loopFault() and
// GET /healthz say so, the loop keeps trying, and its recovery is logged.
describe("the runtime's loop when its rounds keep failing", () => {
  const fx = useDurableFixture('loop-fault');

  it('logs the fault once, reports it, keeps polling, and runs the task once the store claims again', async () => {
    let failing = true;
    let refused = 0;
    // The real SQLite store, its claims refused while `failing` (a store that cannot take a lease).
    const store = new Proxy(fx.store, {
      get(target, key) {
        if (key === 'claimTask' && failing) {
          return () => {
            refused += 1;
            return Promise.reject(
              new CodecallError('STORE_UNAVAILABLE', 'the store cannot commit: disk full'),
            );
          };
        }
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const lines: string[] = [];
    const runtime = createRuntime({
      store,
      drivers: [fx.driver],
      tools: new ToolRegistry([]),
      pollMs: 5,
      log: (line) => lines.push(line),
    });
    try {
      runtime.start();
      const task = await runtime.submit({ code: 'return 6 * 7' });
      while (refused < 20) await sleep(5);
      const fault = runtime.loopFault?.();
      expect(fault).toMatchObject({
        code: 'STORE_UNAVAILABLE',
        message: 'the store cannot commit: disk full',
      });
      expect(fault?.failures).toBeGreaterThanOrEqual(2);
      const told = lines.filter((l) => l.includes("the runtime's loop cannot claim tasks"));
      expect(told).toHaveLength(1); // once, not every poll
      expect(told[0]).toContain('STORE_UNAVAILABLE: the store cannot commit: disk full');
      expect(await liveness(fx.store, runtime)).toMatchObject({
        status: 'degraded',
        loop: { code: 'STORE_UNAVAILABLE', failures: expect.any(Number) as number },
      });
      expect(await fx.store.getTask(task.task_id)).toMatchObject({ status: 'pending' });

      failing = false;
      expect(await runtime.wait(task.task_id, { until: 'terminal' })).toMatchObject({
        status: 'succeeded',
        result: { output: 42 },
      });
      expect(runtime.loopFault?.()).toBeNull();
      expect(lines.filter((l) => l.includes('claims tasks again'))).toHaveLength(1);
      expect(await liveness(fx.store, runtime)).toEqual({ status: 'ok' });
    } finally {
      await runtime.close();
    }
  });
});
