import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver, TaskStore } from '../../src/internal.ts';
import { useDurableFixture } from './fixture.ts';
import { openForTampering } from '../store/tamper.ts';
import type { Runtime } from '../../src/api/index.ts';

// A task whose row was garbled behind the store's back is never leased: before, the runner could not read it,
// gave it up, and the scheduler claimed it again at once, forever, in one unbroken chain of promises (no timer
// ever ran again: the whole process hung). Now its claim fails it with CHECKPOINT_CORRUPT naming the column, in
// the claim's transaction, and the tasks queued after it run. Real SQLite file, real quickjs driver.

const GARBLE: Readonly<Record<string, string>> = {
  'input not JSON': `UPDATE tasks SET input = '{"kind":"co' WHERE id = ?`,
  'input not a task input': `UPDATE tasks SET input = '[1, 2]' WHERE id = ?`,
  'execution log not JSON': `UPDATE tasks SET execution_log = '[' WHERE id = ?`,
  'resources not an object': `UPDATE tasks SET resources = '"x"' WHERE id = ?`,
  'error not JSON': `UPDATE tasks SET error = '{' WHERE id = ?`,
};

describe('a task with a garbled row at its claim', () => {
  const fx = useDurableFixture('corrupt-row-claim');
  let driver: QuickJsDriver;
  let store: TaskStore;
  let runtime: Runtime | undefined;
  beforeAll(() => {
    ({ driver, store } = fx);
  });
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });
  const start = (): Runtime => {
    runtime = createRuntime({ store, drivers: [driver], tools: new ToolRegistry([]), pollMs: 20 });
    return runtime;
  };
  function tamper(sql: string, ...args: unknown[]): void {
    const raw = openForTampering(fx.path);
    try {
      expect(raw.prepare(sql).run(...args).changes).toBe(1);
    } finally {
      raw.close();
    }
  }
  async function settled(r: Runtime, id: string): Promise<NonNullable<Awaited<ReturnType<Runtime['get']>>>> {
    for (let i = 0; i < 1000; i++) {
      const view = await r.get(id);
      if (view && ['succeeded', 'failed'].includes(view.status)) return view;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`task ${id} never ended`);
  }

  it.each(Object.entries(GARBLE))(
    'fails a queued one (%s) with CHECKPOINT_CORRUPT and runs the next',
    async (what, sql) => {
      const r = start();
      const bad = await r.submit({ code: 'return 1;', priority: 10 });
      tamper(sql, bad.task_id);
      const good = await r.submit({ code: 'return 2;' });
      r.start();
      await expect(settled(r, good.task_id)).resolves.toMatchObject({ status: 'succeeded' });
      const view = await settled(r, bad.task_id);
      expect(view.status).toBe('failed');
      // Its error says why (a garbled error column is replaced by it); a row still garbled is also marked.
      const why = view.error?.code === 'CHECKPOINT_CORRUPT' ? view.error.message : view.corrupt?.message;
      expect(why, what).toMatch(/^Row of task \S+ is corrupt: /);
      expect((await store.readAudit(bad.task_id)).map((a) => a.data.to).filter(Boolean)).toEqual([
        'running',
        'failed',
      ]);
      expect((await store.readAudit(bad.task_id)).at(-1)?.data.error_code).toBe('CHECKPOINT_CORRUPT');
    },
  );

  it('fails one recovered from a dead worker (running, lease expired) the same way', async () => {
    const r = start();
    const bad = await r.submit({ code: 'return 1;' });
    const lease = await store.claimTask('dead-worker', { leaseMs: 1, taskId: bad.task_id });
    expect(lease).not.toBeNull();
    tamper(`UPDATE tasks SET input = 'garbage', lease_expires_at = 0 WHERE id = ?`, bad.task_id);
    const good = await r.submit({ code: 'return 2;' });
    r.start();
    await expect(settled(r, good.task_id)).resolves.toMatchObject({ status: 'succeeded' });
    await expect(settled(r, bad.task_id)).resolves.toMatchObject({
      status: 'failed',
      corrupt: { code: 'CHECKPOINT_CORRUPT' },
    });
  });

  it('refuses to run one by id with CHECKPOINT_CORRUPT, and leaves it failed', async () => {
    const r = start();
    const bad = await r.submit({ code: 'return 1;' });
    tamper(`UPDATE tasks SET input = 'garbage' WHERE id = ?`, bad.task_id);
    await expect(r.run(bad.task_id)).rejects.toMatchObject({ code: 'CHECKPOINT_CORRUPT' });
    expect(await r.get(bad.task_id)).toMatchObject({
      status: 'failed',
      corrupt: { code: 'CHECKPOINT_CORRUPT' },
    });
  });
});
