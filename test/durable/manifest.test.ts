import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/internal.ts';
import type { JsonSchema, QuickJsDriver, TaskStore } from '../../src/internal.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';

describe('resuming against changed tools', () => {
  let driver: QuickJsDriver;
  let dir: string;
  let store: TaskStore;
  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    dir = await mkdtemp(join(tmpdir(), 'codecall-manifest-'));
    store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  });
  afterAll(async () => {
    await store.close();
    await driver.close();
    await rm(dir, { recursive: true, force: true });
  });

  function tools(input: JsonSchema, pauseAt: { runner?: TaskRunner; task?: string }) {
    return new ToolRegistry([
      defineTool({
        name: 'step',
        description: 'a step',
        input,
        effect: 'read',
        execute: (args) => {
          if ((args as { i: number }).i === 1 && pauseAt.task) pauseAt.runner?.pause(pauseAt.task);
          return (args as { i: number }).i;
        },
      }),
    ]);
  }

  it('pauses with INCOMPATIBLE_CHECKPOINT unless told to accept the change', async () => {
    const v1: JsonSchema = { type: 'object', properties: { i: { type: 'number' } } };
    const v2: JsonSchema = { type: 'object', properties: { i: { type: 'integer' } } };
    const task = await store.createTask({
      kind: 'code',
      code: 'let s = 0; for (let i = 0; i < 3; i++) s += await tools.step({ i }); return s;',
      language: 'javascript',
      seed: 1,
    });
    const pauseAt: { runner?: TaskRunner; task?: string } = { task: task.id };
    pauseAt.runner = new TaskRunner({ store, driver, tools: tools(v1, pauseAt), owner: 'v1' });
    const paused = await pauseAt.runner.runTask(task.id);
    expect(paused?.status).toBe('paused');

    const resume = async (runner: TaskRunner) => {
      const t = (await store.getTask(task.id))!;
      await store.updateTask(task.id, { status: 'pending' }, { expectedVersion: t.version });
      return runner.runTask(task.id);
    };
    const changed = await resume(new TaskRunner({ store, driver, tools: tools(v2, {}), owner: 'v2' }));
    expect(changed).toMatchObject({
      status: 'paused',
      pauseReason: 'needs_attention',
      error: { code: 'INCOMPATIBLE_CHECKPOINT' },
    });
    expect(changed?.error?.message).toContain('the tools changed');

    const forced = await resume(
      new TaskRunner({ store, driver, tools: tools(v2, {}), owner: 'v2', acceptChangedTools: true }),
    );
    expect(forced).toMatchObject({ status: 'succeeded' });

    const same = await store.createTask({
      kind: 'code',
      code: 'return await tools.step({ i: 5 })',
      language: 'javascript',
      seed: 1,
    });
    const r = new TaskRunner({ store, driver, tools: tools(v1, {}), owner: 'v1' });
    expect(await r.runTask(same.id)).toMatchObject({ status: 'succeeded' });
  });
});
