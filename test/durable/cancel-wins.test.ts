import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createRuntime, TaskRunner } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { payTool, until, useDurableFixture } from './fixture.ts';

// A cancel wins over a pause (ADR 0011), however the two meet: in this runtime while the run winds down, or in
// the store while the task runs elsewhere.
// Each case was a bug (a review's finding, or one the state-machine property test found, as its minimal case):
// the comment says what is correct and what went wrong before the fix; the test asserts the correct behaviour.

describe('a cancel wins over a pause', () => {
  const fx = useDurableFixture('cancel-wins');
  const paid: unknown[] = [];
  const tools = new ToolRegistry([payTool(paid)]);

  // Correct: a cancel accepted by runtime.cancel() while the task is still winding down from a pause (a tool call
  // in flight is being given time to finish) must win: the task ends cancelled. Bug: TaskRunner.interrupt()
  // called abort() on an already-aborted controller, which is a no-op, so the PAUSED reason stayed and the
  // cancel was silently dropped; cancel() resolved with a paused task.
  it('a cancel right after a pause of a running task in this runtime is not lost', async () => {
    let started = false;
    const work = defineTool({
      name: 'work',
      description: 'takes a while and ignores the abort signal',
      effect: 'read',
      execute: async () => {
        started = true;
        await sleep(300);
        return 'done';
      },
    });
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools: new ToolRegistry([work]) });
    const t = await runtime.submit({ code: 'return await tools.work({});' });
    const run = runtime.run(t.task_id);
    await until(() => started);
    const paused = runtime.pause(t.task_id);
    const cancelled = await runtime.cancel(t.task_id);
    await paused;
    await run;
    expect(cancelled).toMatchObject({ status: 'cancelled' }); // bug: paused (user_request)
    expect((await fx.store.getTask(t.task_id))?.status).toBe('cancelled');
    await runtime.close();
  });

  // Correct: a cancel accepted while the run is winding down into an approval pause must win (ADR 0011: cancel wins
  // over a pause). Bug: runJournaled's own controller was already aborted with APPROVAL_REQUIRED, so the runner's
  // CANCELLED reason never reached the result (runJournaled's forward() is a no-op then), and settleRun only
  // looked at the store's requested_action, which an in-process cancel never sets.
  it('a cancel while the run winds down into an approval pause is not lost', async () => {
    const pay = defineTool({
      name: 'pay',
      description: 'needs approval',
      effect: 'unsafe',
      requiresApproval: true,
      execute: () => 'paid',
    });
    const work = defineTool({
      name: 'work',
      description: 'takes a while and ignores the abort signal',
      effect: 'read',
      execute: async () => {
        await sleep(400);
        return 'done';
      },
    });
    const runtime = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([pay, work]),
    });
    const t = await runtime.submit({ code: 'return await Promise.all([tools.pay({}), tools.work({})]);' });
    const run = runtime.run(t.task_id);
    await until(async () =>
      (await fx.store.readJournal(t.task_id)).some((e) => e.type === 'approval_request'),
    );
    await sleep(60); // past APPROVAL_COLLECT_MS: the run now waits for `work` before it pauses
    const cancelled = await runtime.cancel(t.task_id);
    await run;
    expect(cancelled).toMatchObject({ status: 'cancelled' }); // bug: paused (approval_required)
    await runtime.close();
  });

  it('a cancel accepted while the task runs elsewhere is not lost when that run pauses', async () => {
    // Worker A's control poll is slow, so the cancel waits in the store until A's run pauses for approval.
    const other = await createSqliteTaskStore({ path: fx.path });
    const a = new TaskRunner({ store: other, driver: fx.driver, tools, owner: 'A', controlPollMs: 60_000 });
    const api = createRuntime({ store: fx.store, drivers: [fx.driver], tools });
    try {
      const t = await api.submit({ code: 'return await tools.pay({ n: 1 });' });
      const run = a.runTask(t.task_id);
      while ((await fx.store.getTask(t.task_id))?.status !== 'running')
        await new Promise((r) => setTimeout(r, 1));
      await expect(api.cancel(t.task_id)).resolves.toMatchObject({ status: 'running' });
      expect(await run).toMatchObject({ status: 'cancelled', error: { code: 'CANCELLED' } });
      const last = (await fx.store.readJournal(t.task_id)).at(-1);
      expect(last).toMatchObject({ type: 'control', data: { action: 'cancel' } });
    } finally {
      await api.close();
      await other.close();
    }
  });
});
