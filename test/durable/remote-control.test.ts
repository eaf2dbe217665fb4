import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver, TaskStore } from '../../src/internal.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import type { Runtime } from '../../src/api/index.ts';

// Two runtimes on two connections to one SQLite file: the one that does not run a task steers it through the
// store (as another process would), and the runner acts within its control poll.

describe('pause and cancel from another connection', () => {
  let driver: QuickJsDriver;
  let dir: string;
  let storeA: TaskStore;
  let storeB: TaskStore;
  let worker: Runtime;
  let operator: Runtime;
  let abortedCalls = 0;

  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    dir = await mkdtemp(join(tmpdir(), 'codecall-remote-'));
    const path = join(dir, 'tasks.db');
    storeA = await createSqliteTaskStore({ path });
    storeB = await createSqliteTaskStore({ path });
    const tools = new ToolRegistry([
      defineTool({
        name: 'hang',
        description: 'waits until aborted',
        effect: 'read',
        execute: (_a, ctx) =>
          new Promise((_r, reject) =>
            ctx.signal.addEventListener('abort', () => {
              abortedCalls++;
              reject(new Error('aborted'));
            }),
          ),
      }),
    ]);
    worker = createRuntime({ store: storeA, drivers: [driver], tools, pollMs: 50, owner: 'worker' });
    worker.start();
    operator = createRuntime({ store: storeB, drivers: [driver], tools, pollMs: 50, owner: 'operator' });
  });
  afterAll(async () => {
    await worker.close();
    await operator.close();
    await storeA.close();
    await storeB.close();
    await driver.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Submits and waits until the run has journaled `entries` (5: set up; 6: its first tool call's intent too). */
  async function running(code: string, entries = 5): Promise<string> {
    const t = await operator.submit({ code, limits: { timeoutMs: 60_000 } });
    for (let i = 0; i < 500; i++) {
      const view = await operator.get(t.task_id);
      if (view?.status === 'running' && (view.progress.journal_entries ?? 0) >= entries) return t.task_id;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('the task never ran');
  }

  it('pauses a task spinning in another runtime, promptly', async () => {
    const id = await running('let n = 0; while (true) n++;');
    const asked = await operator.pause(id, { actor: 'ops' });
    expect(asked.status).toBe('running'); // recorded; the runner acts on its next poll
    const paused = await operator.wait(id);
    expect(paused).toMatchObject({ status: 'paused', pause_reason: 'user_request' });
    expect((await storeB.getTask(id))?.requestedAction).toBeNull();
    await operator.cancel(id);
  });

  it('cancels a task in another runtime: its running tool call is aborted', async () => {
    // Once the call's intent is journaled the tool runs, so the cancel finds it running.
    const id = await running('await tools.hang({}); return 1;', 6);
    const before = abortedCalls;
    await operator.cancel(id, { actor: 'ops' });
    const done = await operator.wait(id, { until: 'terminal' });
    expect(done).toMatchObject({ status: 'cancelled', error: { code: 'CANCELLED' } });
    expect(abortedCalls).toBe(before + 1);
  });

  it('cancels a running task whose worker died (its lease expired) at once', async () => {
    const code = 'await tools.hang({}); return 1;';
    const t = await storeB.createTask({ kind: 'code', code, language: 'javascript', seed: 1 });
    await storeB.claimTask('dead', { leaseMs: 1, taskId: t.id });
    await new Promise((r) => setTimeout(r, 5));
    await operator.cancel(t.id, { actor: 'ops' });
    // Cancelled here at once, or (if the other runtime recovered it first) by that runtime on its next poll.
    const done = await operator.wait(t.id, { until: 'terminal' });
    expect(done).toMatchObject({ status: 'cancelled' });
  });
});
