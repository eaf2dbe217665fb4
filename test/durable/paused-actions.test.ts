import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createRuntime, TaskRunner } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { useDurableFixture } from './fixture.ts';

// Bugs a review found (each comment says what is correct and what went wrong before the fix); each test now
// asserts the correct behaviour.

async function until(check: () => Promise<boolean> | boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await sleep(2);
  }
}

describe('review findings', () => {
  const fx = useDurableFixture('review-findings');

  // Correct: an unsafe call that was journaled `not_started` (a pause between its intent and its start) and then
  // started on resume must never run a second time. After a crash during that second run the task must pause
  // with needs_attention. Bug: JournalMemory.notStarted is never cleared (journal-memory.ts:61) and running the
  // call journals no "started" marker (journaling-host.ts:114 -> live()), so every later recovery re-runs it.
  it('an unsafe call resumed after not_started never runs twice after a crash', async () => {
    const sent: string[] = [];
    let crash: (() => Promise<void>) | undefined;
    const send = defineTool({
      name: 'send',
      description: 'unsafe',
      effect: 'unsafe',
      execute: async (a) => {
        sent.push((a as { to: string }).to);
        // The worker running this call dies before the outcome is journaled.
        if (crash) await crash();
        return 'sent';
      },
    });
    const tools = new ToolRegistry([send]);
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools });
    const t = await runtime.submit({ code: "return await tools.send({ to: 'x' });" });
    const off = runtime.subscribe(t.task_id, (e) => {
      if (e.type === 'journal' && e.entries.some((x) => x.type === 'tool_intent'))
        void runtime.pause(t.task_id);
    });
    await expect(runtime.run(t.task_id)).resolves.toMatchObject({ status: 'paused' });
    off();
    expect(sent).toEqual([]);
    const journal = await fx.store.readJournal(t.task_id);
    expect(journal.some((e) => e.type === 'control' && e.data.action === 'not_started')).toBe(true);
    await runtime.resume(t.task_id);
    await runtime.close();

    // Worker B (its own connection) runs the call, then "dies": its store goes away before the outcome is written.
    const other = await createSqliteTaskStore({ path: fx.path });
    crash = () => other.close();
    const b = new TaskRunner({ store: other, driver: fx.driver, tools, owner: 'B', leaseMs: 200 });
    await b.runTask(t.task_id).catch(() => undefined);
    expect(sent).toEqual(['x']);
    crash = undefined;
    await sleep(300); // B's lease expires

    const c = new TaskRunner({ store: fx.store, driver: fx.driver, tools, owner: 'C' });
    const after = await c.runTask(t.task_id);
    expect(sent).toEqual(['x']); // bug: ['x', 'x']
    expect(after).toMatchObject({ status: 'paused', pauseReason: 'needs_attention' });
  });

  // Correct: a cancel accepted by runtime.cancel() while the task is still winding down from a pause (a tool call
  // in flight is being given time to finish) must win: the task ends cancelled. Bug: TaskRunner.interrupt()
  // (task-runner.ts:179) calls abort() on an already-aborted controller, which is a no-op, so the PAUSED reason
  // stays and the cancel is silently dropped; cancel() resolves with a paused task.
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
  // over a pause). Bug: runJournaled's own controller is already aborted with APPROVAL_REQUIRED, so the runner's
  // CANCELLED reason never reaches the result (run-journaled.ts:55 forward() is a no-op), and settleRun only
  // looks at the store's requested_action (settle-run.ts:148), which an in-process cancel never sets.
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
});

describe('review findings: input-wait deadlines', () => {
  const fx = useDurableFixture('review-findings-wake');

  // Correct: answering an input wait of a task paused for approval (allowed: the patch keeps the pause) must clear
  // (or recompute) the task's wake_at; a wake-up that has nothing to time out must leave the due list. Bug:
  // provideInput's patch is {} when pause_reason != awaiting_input (paused-actions.ts:103), so wake_at stays;
  // wakeDue (runtime-sweeps.ts:222) then finds the task due at every poll, timeOutInputs returns null and nothing
  // clears it. Such tasks are listed first (oldest) under the LIMIT 100, so 100 of them starve every later task's
  // input timeout forever (while their approvals wait).
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

describe('review findings: decisions, inputs and close', () => {
  const fx = useDurableFixture('review-findings-misc');
  const pay = defineTool({
    name: 'pay',
    description: 'needs approval',
    effect: 'unsafe',
    requiresApproval: true,
    execute: () => 'paid',
  });

  // Correct: one decide() call that carries two contradictory decisions for the same approval is rejected with
  // INVALID_ARGUMENT (nothing journaled). Bug: decideApprovals (paused-actions.ts:47) checks each id against the
  // pending set but never against the other decisions of the batch, so both approval_decision entries are
  // journaled and the replay silently takes the last one (journal-memory.ts:38).
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
  // function or a BigInt is. Bug: provideInput (paused-actions.ts:94) round-trips through JSON.stringify, which
  // turns NaN into null, so the guest silently receives null.
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
});

describe('review findings: submit validation', () => {
  const fx = useDurableFixture('review-findings-submit');
  const rec = defineTool({ name: 'rec', description: 'records', effect: 'read', execute: () => 1 });

  // Correct: a seed that cannot be stored as given (NaN, Infinity) is refused by submit() with INVALID_ARGUMENT,
  // or the seed actually used is the one stored, so a replay is deterministic. Bug: submit (create-runtime.ts:63)
  // takes any `seed`; the row stores NaN as null and every run's sandbox then picks its own seed, so the first
  // resume after a pause fails with REPLAY_DIVERGENCE (Math.random differs).
  it('a NaN seed is refused or replays deterministically (never REPLAY_DIVERGENCE)', async () => {
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools: new ToolRegistry([rec]) });
    try {
      let t;
      try {
        t = await runtime.submit({
          code: "const a = Math.random(); await tools.rec({ a }); await input.wait('go'); return a;",
          seed: Number.NaN,
        });
      } catch (e) {
        expect(e).toMatchObject({ code: 'INVALID_ARGUMENT' });
        return;
      }
      await expect(runtime.run(t.task_id)).resolves.toMatchObject({ pause_reason: 'awaiting_input' });
      await runtime.provideInput(t.task_id, 'go', 1);
      const done = await runtime.run(t.task_id);
      expect(done.error?.code).not.toBe('REPLAY_DIVERGENCE'); // bug: REPLAY_DIVERGENCE
      expect(done.status).toBe('succeeded');
    } finally {
      await runtime.close();
    }
  });

  // Correct: metadata that is not JSON (a BigInt) is the caller's mistake: INVALID_ARGUMENT. Bug: it reaches
  // JSON.stringify inside the SQLite store (sqlite-task-store.ts:61) and surfaces as STORE_ERROR, a server-side
  // failure code (a 500 at the service).
  it('submit() with non-JSON metadata fails with INVALID_ARGUMENT, not STORE_ERROR', async () => {
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools: new ToolRegistry([rec]) });
    try {
      await expect(runtime.submit({ code: 'return 1;', metadata: { n: 10n } })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      }); // bug: STORE_ERROR
    } finally {
      await runtime.close();
    }
  });
});

describe('review findings: close', () => {
  const fx = useDurableFixture('review-findings-close');

  // Correct: once close() has resolved, this runtime runs nothing: a claim that was in progress at close() either
  // does not happen or is waited for. Bug: kick()'s loop (create-runtime.ts:327-330) checks `closed` before
  // startNext(), which then awaits the drivers' readiness and claims anyway; close() only awaited the runs it had
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
