import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import { useDurableFixture } from './fixture.ts';

// What close() promises: once it has resolved, this runtime runs nothing.
// Each case was a bug (a review's finding, or one the state-machine property test found, as its minimal case):
// the comment says what is correct and what went wrong before the fix; the test asserts the correct behaviour.

describe('runtime close', () => {
  const fx = useDurableFixture('runtime-close');

  // Correct: once close() has resolved, this runtime runs nothing: a claim that was in progress at close() either
  // does not happen or is waited for. Bug: kick()'s loop (create-runtime.ts) checked `closed` before
  // startNext(), which then awaited the drivers' readiness and claimed anyway; close() only awaited the runs it had
  // seen, so the task is claimed and run after close() returned (here it is still `running`, leased by a runtime
  // the caller believes closed; closing the store/driver next strands or fails it).
  it('close() during start-up does not leave a task claimed behind it', async () => {
    const { createQuickJsDriver } = await import('../../src/index.ts');
    const fresh = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    const slow = defineTool({
      name: 'slow',
      description: 'takes a while',
      effect: 'read',
      execute: async () => {
        await sleep(300);
        return 1;
      },
    });
    const runtime = createRuntime({
      store: fx.store,
      drivers: [fresh],
      tools: new ToolRegistry([slow]),
      pollMs: 10,
    });
    try {
      const t = await runtime.submit({ code: 'return await tools.slow({});' });
      runtime.start();
      await sleep(15); // the first poll now waits for the fresh driver to be ready
      await runtime.close();
      await sleep(500);
      const after = await fx.store.getTask(t.task_id);
      expect(after).toMatchObject({ status: 'pending', attempts: 0 }); // bug: running or succeeded (claimed and run after close)
    } finally {
      await fresh.close();
    }
  });
});
