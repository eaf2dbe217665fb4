import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextAttempt, TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver, TaskStore } from '../../src/internal.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';

describe('crash loops (SQLite)', () => {
  let driver: QuickJsDriver;
  let dir: string;
  let store: TaskStore;
  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    dir = await mkdtemp(join(tmpdir(), 'codecall-crash-loop-'));
    store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  });
  afterAll(async () => {
    await store.close();
    await driver.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('fails a task whose runs keep dying before any progress, instead of retrying forever', async () => {
    const task = await store.createTask({ kind: 'code', code: 'return 1', language: 'javascript', seed: 1 });
    // Three workers claimed it, journaled their attempt, and died (their leases then expired).
    let now = Date.now() - 60_000;
    for (let i = 0; i < 3; i++) {
      const lease = await store.claimTask(`dead-${i}`, { leaseMs: 1_000, now, taskId: task.id });
      expect(lease).not.toBeNull();
      const next = nextAttempt(await store.readJournal(task.id), 3);
      if ('error' in next) throw next.error;
      await store.appendJournal(task.id, [next.entry], { fencingToken: lease!.fencingToken });
      now += 5_000;
    }
    const runner = new TaskRunner({ store, driver, tools: new ToolRegistry([]), owner: 'survivor' });
    const ended = await runner.runTask(task.id);
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'CRASH_LOOP' } });
  });

  it('runs a task normally after a single dead attempt', async () => {
    const task = await store.createTask({ kind: 'code', code: 'return 2', language: 'javascript', seed: 1 });
    const lease = await store.claimTask('dead', { leaseMs: 1, now: Date.now() - 10_000, taskId: task.id });
    const next = nextAttempt(await store.readJournal(task.id), 3);
    if ('error' in next) throw next.error;
    await store.appendJournal(task.id, [next.entry], { fencingToken: lease!.fencingToken });
    const runner = new TaskRunner({ store, driver, tools: new ToolRegistry([]), owner: 'survivor' });
    expect(await runner.runTask(task.id)).toMatchObject({ status: 'succeeded' });
  });
});
