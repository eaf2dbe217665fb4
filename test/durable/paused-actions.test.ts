import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createRuntime, TaskRunner } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import { useDurableFixture } from './fixture.ts';

// What people do to a paused task (decide approvals, provide input) and the input waits' timeouts.
// Each case was a bug (a review's finding, or one the state-machine property test found, as its minimal case):
// the comment says what is correct and what went wrong before the fix; the test asserts the correct behaviour.

describe('paused tasks: decisions and inputs', () => {
  const fx = useDurableFixture('paused-actions');
  const pay = defineTool({
    name: 'pay',
    description: 'needs approval',
    effect: 'unsafe',
    requiresApproval: true,
    execute: () => 'paid',
  });
  const tools = new ToolRegistry([pay]);

  // Correct: one decide() call that carries two contradictory decisions for the same approval is rejected with
  // INVALID_ARGUMENT (nothing journaled). Bug: decideApprovals (paused-actions.ts) checked each id against the
  // pending set but never against the other decisions of the batch, so both approval_decision entries were
  // journaled and the replay (JournalMemory, reading them in order) silently took the last one.
  it('decide() rejects two decisions for the same approval in one call', async () => {
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools: new ToolRegistry([pay]) });
    try {
      const t = await runtime.submit({ code: 'return await tools.pay({ n: 1 });' });
      await expect(runtime.run(t.task_id)).resolves.toMatchObject({ pause_reason: 'approval_required' });
      await expect(
        runtime.decide(t.task_id, [
          { approvalId: 'call-1', decision: 'approve' },
          { approvalId: 'call-1', decision: 'reject' },
        ]),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    } finally {
      await runtime.close();
    }
  });

  // Correct: provideInput with a value that is not JSON (NaN, Infinity) is refused with INVALID_ARGUMENT, as a
  // function or a BigInt is. Bug: provideInput (paused-actions.ts) round-tripped through JSON.stringify, which
  // turned NaN into null, so the guest silently received null.
  it('provideInput refuses NaN instead of delivering null', async () => {
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools: new ToolRegistry([]) });
    try {
      const t = await runtime.submit({ code: "return await input.wait('n');" });
      await expect(runtime.run(t.task_id)).resolves.toMatchObject({ pause_reason: 'awaiting_input' });
      await expect(runtime.provideInput(t.task_id, 'n', Number.NaN)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    } finally {
      await runtime.close();
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
});

describe('paused tasks: input-wait deadlines', () => {
  const fx = useDurableFixture('paused-actions-wake');

  // Correct: answering an input wait of a task paused for approval (allowed: the patch keeps the pause) must clear
  // (or recompute) the task's wake_at; a wake-up that has nothing to time out must leave the due list. Bug:
  // provideInput's patch was {} when pause_reason != awaiting_input, so wake_at stayed; wakeDue (runtime-sweeps.ts)
  // then found the task due at every poll, timeOutInputs returned null and nothing cleared it. Such tasks are listed first (oldest) under the LIMIT 100, so 100 of them starved every later task's
  // input timeout forever (while their approvals waited).
  it('tasks whose answered input wait is still "due" do not starve other tasks of their timeouts', async () => {
    const { store } = fx;
    const tools = new ToolRegistry([]);
    const api = createRuntime({ store, drivers: [fx.driver], tools, pollMs: 20 });
    const deadline = Date.now() + 150;
    const craft = async (pauseReason: 'approval_required' | 'awaiting_input'): Promise<string> => {
      // What a run of `await Promise.all([input.wait('x', { timeoutSeconds }), tools.pay({})])` leaves.
      const t = await store.createTask({ kind: 'code', code: 'return 1;', language: 'javascript', seed: 1 });
      const lease = await store.claimTask('crafter', { leaseMs: 60_000, taskId: t.id });
      if (!lease) throw new Error('not claimable');
      const fenced = { fencingToken: lease.fencingToken };
      await store.appendJournal(
        t.id,
        [
          { type: 'tool_intent', data: { call_id: 'call-1', tool: 'input.wait', args: '{"name":"x"}' } },
          { type: 'input_request', data: { call_id: 'call-1', name: 'x', timeout_seconds: 0.15, deadline } },
          ...(pauseReason === 'approval_required'
            ? [
                { type: 'tool_intent' as const, data: { call_id: 'call-2', tool: 'tools.pay', args: '{}' } },
                {
                  type: 'approval_request' as const,
                  data: { approval_id: 'call-2', call_id: 'call-2', tool: 'tools.pay', args: '{}' },
                },
              ]
            : []),
        ],
        fenced,
      );
      await store.updateTask(t.id, { status: 'paused', pauseReason, wakeAt: deadline }, fenced);
      return t.id;
    };
    for (let i = 0; i < 100; i++) {
      const id = await craft('approval_required');
      await api.provideInput(id, 'x', 1); // answered; the task still waits for its approval
    }
    await sleep(5);
    const victim = await craft('awaiting_input');
    await sleep(Math.max(0, deadline - Date.now()) + 10);
    api.start();
    try {
      await sleep(1_000);
      const journal = await store.readJournal(victim);
      expect(journal.some((e) => e.type === 'input_timeout')).toBe(true); // bug: never journaled
    } finally {
      await api.close();
    }
  });
});
