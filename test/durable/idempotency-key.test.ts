import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver, TaskStore } from '../../src/internal.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';

describe('keyed tools', () => {
  let driver: QuickJsDriver;
  let dir: string;
  let store: TaskStore;
  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    dir = await mkdtemp(join(tmpdir(), 'codecall-keyed-'));
    store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  });
  afterAll(async () => {
    await store.close();
    await driver.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('get the same idempotency key when a lost call runs again after a pause', async () => {
    const keys: (string | undefined)[] = [];
    let hang = true;
    const holder: { runner?: TaskRunner } = {};
    let taskId = '';
    const charge = defineTool({
      name: 'charge',
      description: 'charges a card; safe to repeat with the same key',
      effect: 'keyed',
      execute: (_args, ctx) => {
        keys.push(ctx.idempotencyKey);
        if (!hang) return 'charged';
        // The first attempt hangs until the task is paused, then gives up: its outcome is unknown.
        setTimeout(() => holder.runner?.pause(taskId), 20);
        return new Promise((_resolve, reject) =>
          ctx.signal.addEventListener('abort', () => reject(new Error('gave up'))),
        );
      },
    });
    const runner = new TaskRunner({ store, driver, tools: new ToolRegistry([charge]), owner: 'keyed' });
    holder.runner = runner;
    const task = await store.createTask({
      kind: 'code',
      code: 'return await tools.charge({ amount: 5 });',
      language: 'javascript',
      seed: 1,
    });
    taskId = task.id;
    const paused = await runner.runTask(task.id);
    expect(paused?.status).toBe('paused');
    hang = false;
    await store.updateTask(task.id, { status: 'pending' }, { expectedVersion: paused!.version });
    const done = await runner.runTask(task.id);
    expect(done?.status).toBe('succeeded');
    expect(keys).toEqual([`${task.id}:0:call-1`, `${task.id}:0:call-1`]);
    const intent = (await store.readJournal(task.id)).find((e) => e.type === 'tool_intent');
    expect(intent?.data.idempotency_key).toBe(`${task.id}:0:call-1`);
  });
});
