import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/index.ts';
import type { QuickJsDriver, TaskStore } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';

// Minimal reproductions of the bugs test/durable/state-machine.property.test.ts found (KNOWN_BUGS there).
// Each is `it.fails`: it passes while the bug is there. When a fix makes one fail, turn it into `it` and delete
// the bug's entry in KNOWN_BUGS (state-machine-checks.ts).

describe('known bugs (found by the state-machine property)', () => {
  let driver: QuickJsDriver;
  let dir: string;
  let path: string;
  let store: TaskStore;
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

  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    dir = await mkdtemp(join(tmpdir(), 'codecall-known-bugs-'));
    path = join(dir, 'tasks.db');
    store = await createSqliteTaskStore({ path });
  });
  afterAll(async () => {
    await store.close();
    await driver.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.fails(
    'lostCancel: a cancel accepted while the task runs elsewhere is dropped when the run pauses',
    async () => {
      // Worker A runs the task (its control poll is slow, so the cancel request waits in the store); the API of
      // another process cancels it: accepted (the task is running), stored as requested_action = 'cancel'.
      const other = await createSqliteTaskStore({ path });
      const a = new TaskRunner({ store: other, driver, tools, owner: 'A', controlPollMs: 60_000 });
      const api = createRuntime({ store, drivers: [driver], tools }); // never started
      try {
        const t = await api.submit({ code: 'return await tools.pay({ n: 1 });' });
        const run = a.runTask(t.task_id);
        while ((await store.getTask(t.task_id))?.status !== 'running')
          await new Promise((r) => setTimeout(r, 1));
        await expect(api.cancel(t.task_id)).resolves.toMatchObject({ status: 'running' });
        // The run ends in its approval pause; leaving `running` clears the request, and the cancel is gone.
        const ended = await run;
        expect(ended).toMatchObject({ status: 'cancelled' }); // actual: paused (approval_required), requestedAction null
      } finally {
        await api.close();
        await other.close();
      }
    },
  );

  it.fails(
    'slowRepause: pausing again for an approval that was already requested takes the 5 s settle window',
    async () => {
      const runner = new TaskRunner({ store, driver, tools, owner: 'B' });
      const t = await store.createTask({
        kind: 'code',
        code: 'return await Promise.all([tools.pay({ n: 1 }), tools.pay({ n: 2 })]);',
        language: 'javascript',
        seed: 1,
      });
      await expect(runner.runTask(t.id)).resolves.toMatchObject({ pauseReason: 'approval_required' }); // ~50 ms
      // Deciding one of the two: the replay waits again for the other, already requested -> pauses again.
      const started = performance.now();
      const again = await runner.decide(t.id, [{ approvalId: 'call-1', decision: 'approve' }], 'ops');
      expect(again).toMatchObject({ status: 'paused', pauseReason: 'approval_required' });
      expect(performance.now() - started).toBeLessThan(1_000); // actual: ~5050 ms (DEFAULT_SETTLE_MS)
    },
    20_000,
  );

  it.fails(
    'falseAttention: an approval-gated call that was never asked about needs attention after a crash',
    async () => {
      const runner = new TaskRunner({ store, driver, tools, owner: 'C' });
      const t = await store.createTask({
        kind: 'code',
        code: 'return await tools.pay({ n: 3 });',
        language: 'javascript',
        seed: 1,
      });
      // The worker died after journaling the call's intent, before its approval_request: the call cannot have run.
      const lease = await store.claimTask('dead-worker', { leaseMs: 60_000, taskId: t.id });
      await store.appendJournal(
        t.id,
        [{ type: 'tool_intent', data: { call_id: 'call-1', tool: 'tools.pay', args: '{"n":3}' } }],
        { fencingToken: lease!.fencingToken },
      );
      await store.releaseLease(lease!);
      const after = await runner.runTask(t.id);
      expect(paid).not.toContainEqual({ n: 3 });
      expect(after).toMatchObject({ status: 'paused', pauseReason: 'approval_required' }); // actual: needs_attention
    },
  );
});
