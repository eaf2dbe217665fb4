import { describe, expect, it } from 'vitest';
import { createRuntime, TaskRunner } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { journalAsDeadWorker, useDurableFixture } from './fixture.ts';

// Bugs the state-machine property test (state-machine.property.test.ts) found, each as a minimal case.

describe('regressions found by the state-machine property', () => {
  const fx = useDurableFixture('regressions');
  const paid: unknown[] = [];
  const tools = new ToolRegistry([
    defineTool({
      name: 'pay',
      description: 'pays (unsafe, needs approval)',
      effect: 'unsafe',
      requiresApproval: true,
      execute: (a) => {
        paid.push(a);
        return 'paid';
      },
    }),
  ]);

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

  it('pausing again for an approval requested before does not wait out the settle window', async () => {
    const runner = new TaskRunner({ store: fx.store, driver: fx.driver, tools, owner: 'B' });
    const t = await fx.store.createTask({
      kind: 'code',
      code: 'return await Promise.all([tools.pay({ n: 1 }), tools.pay({ n: 2 })]);',
      language: 'javascript',
      seed: 1,
    });
    await expect(runner.runTask(t.id)).resolves.toMatchObject({ pauseReason: 'approval_required' });
    const started = performance.now();
    const again = await runner.decide(t.id, [{ approvalId: 'call-1', decision: 'approve' }], 'ops');
    expect(again).toMatchObject({ status: 'paused', pauseReason: 'approval_required' });
    expect(performance.now() - started).toBeLessThan(2_000); // was ~5 s (DEFAULT_SETTLE_MS)
  });

  it('an approval-gated call lost before its approval request asks for approval, not attention', async () => {
    const runner = new TaskRunner({ store: fx.store, driver: fx.driver, tools, owner: 'C' });
    const t = await fx.store.createTask({
      kind: 'code',
      code: 'return await tools.pay({ n: 3 });',
      language: 'javascript',
      seed: 1,
    });
    // The worker died after journaling the intent, before the approval request: the call cannot have run.
    await journalAsDeadWorker(fx.store, t.id, [
      { type: 'tool_intent', data: { call_id: 'call-1', tool: 'tools.pay', args: '{"n":3}' } },
    ]);
    const after = await runner.runTask(t.id);
    expect(paid).not.toContainEqual({ n: 3 });
    expect(after).toMatchObject({ status: 'paused', pauseReason: 'approval_required' });
  });

  it("a pause between an unsafe call's intent and its start does not make the call need attention", async () => {
    const sent: string[] = [];
    const send = defineTool({
      name: 'send',
      description: 'unsafe',
      effect: 'unsafe',
      execute: (a) => {
        sent.push((a as { to: string }).to);
        return 'sent';
      },
    });
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools: new ToolRegistry([send]) });
    const t = await runtime.submit({ code: "return await tools.send({ to: 'x' });" });
    // Pause the moment the intent is committed: the tool has not started yet.
    const off = runtime.subscribe(t.task_id, (e) => {
      if (e.type === 'journal' && e.entries.some((x) => x.type === 'tool_intent'))
        void runtime.pause(t.task_id);
    });
    const paused = await runtime.run(t.task_id);
    off();
    expect(paused).toMatchObject({ status: 'paused', pause_reason: 'user_request' });
    expect(sent).toEqual([]);
    await runtime.resume(t.task_id);
    const done = await runtime.run(t.task_id);
    expect(done).toMatchObject({ status: 'succeeded', result: { output: 'sent' } });
    expect(sent).toEqual(['x']);
    await runtime.close();
  });
});
