import { openForTampering } from '../store/tamper.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver, TaskStore } from '../../src/internal.ts';
import { journalAsDeadWorker, useDurableFixture } from './fixture.ts';
import type { Runtime } from '../../src/api/index.ts';

// A damaged or diverging journal fails only its own task, with its own code; the other tasks go on.

describe('journal integrity through the runtime', () => {
  const fx = useDurableFixture('integrity');
  let driver: QuickJsDriver;
  let path: string;
  let store: TaskStore;
  let runtime: Runtime;

  beforeAll(() => {
    ({ driver, store, path } = fx);
    const tools = new ToolRegistry([
      defineTool({ name: 'echo', description: 'echoes', effect: 'read', execute: (a) => a }),
    ]);
    runtime = createRuntime({ store, drivers: [driver], tools, pollMs: 50 });
  });
  afterAll(async () => {
    await runtime.close();
  });

  const program =
    'const a = await tools.echo({ n: 1 }); const b = await tools.echo({ n: 2 }); return [a.n, b.n];';

  it('fails a task whose journal was tampered with (CHECKPOINT_CORRUPT) and runs its neighbour', async () => {
    const damaged = await runtime.submit({ code: program });
    const healthy = await runtime.submit({ code: program });
    for (const id of [damaged.task_id, healthy.task_id]) {
      await expect(runtime.run(id)).resolves.toMatchObject({ status: 'succeeded' });
    }
    // Both are made to run again from their journals; one journal entry is edited behind the store's back.
    const raw = openForTampering(path);
    const row = raw
      .prepare(
        "SELECT seq, data FROM journal WHERE task_id = ? AND type = 'tool_outcome' ORDER BY seq LIMIT 1",
      )
      .get(damaged.task_id) as { seq: number; data: string };
    const forged = row.data.replace('\\"n\\":1', '\\"n\\":7');
    expect(forged).not.toBe(row.data);
    raw
      .prepare('UPDATE journal SET data = ? WHERE task_id = ? AND seq = ?')
      .run(forged, damaged.task_id, row.seq);
    raw
      .prepare("UPDATE tasks SET status = 'pending', version = version + 1 WHERE id IN (?, ?)")
      .run(damaged.task_id, healthy.task_id);
    raw.close();
    const bad = await runtime.run(damaged.task_id);
    expect(bad).toMatchObject({ status: 'failed', error: { code: 'CHECKPOINT_CORRUPT' } });
    const good = await runtime.run(healthy.task_id);
    expect(good).toMatchObject({ status: 'succeeded', result: { output: [1, 2] } });
  });

  it('fails a task whose stored program no longer matches its journal (CHECKPOINT_CORRUPT)', async () => {
    const t = await runtime.submit({ code: program });
    await expect(runtime.run(t.task_id)).resolves.toMatchObject({ status: 'succeeded' });
    const journal = await store.readJournal(t.task_id);
    expect(journal.map((e) => e.type)).toContain('code_block');
    const raw = openForTampering(path);
    const row = raw.prepare('SELECT input FROM tasks WHERE id = ?').get(t.task_id) as { input: string };
    const input = JSON.parse(row.input) as { code: string };
    input.code = input.code.replace('n: 2', 'n: 3');
    raw
      .prepare("UPDATE tasks SET input = ?, status = 'pending', version = version + 1 WHERE id = ?")
      .run(JSON.stringify(input), t.task_id);
    raw.close();
    const view = await runtime.run(t.task_id);
    expect(view).toMatchObject({ status: 'failed', error: { code: 'CHECKPOINT_CORRUPT' } });
    expect(view.error?.message).toContain('does not match');
  });

  it('fails a task waiting for input whose journal was damaged when its wait times out', async () => {
    const sweeper = createRuntime({ store, drivers: [driver], tools: new ToolRegistry([]), pollMs: 50 });
    sweeper.start();
    try {
      const t = await sweeper.submit({ code: "return await input.wait('x', { timeoutSeconds: 0.3 });" });
      expect(await sweeper.wait(t.task_id)).toMatchObject({ pause_reason: 'awaiting_input' });
      const raw = openForTampering(path);
      raw
        .prepare(
          "UPDATE journal SET data = replace(data, 'javascript', 'typescript') WHERE task_id = ? AND seq = 1",
        )
        .run(t.task_id);
      raw.close();
      const done = await sweeper.wait(t.task_id, { until: 'terminal', signal: AbortSignal.timeout(10_000) });
      expect(done).toMatchObject({ status: 'failed', error: { code: 'CHECKPOINT_CORRUPT' } });
    } finally {
      await sweeper.close();
    }
  });

  it('fails with REPLAY_DIVERGENCE naming the first differing call when the program no longer matches', async () => {
    const task = await store.createTask({ kind: 'code', code: program, language: 'javascript', seed: 1 });
    await journalAsDeadWorker(
      store,
      task.id,
      [
        { type: 'tool_intent', data: { call_id: 'call-1', tool: 'tools.echo', args: '{"n":99}' } },
        { type: 'tool_outcome', data: { call_id: 'call-1', ok: true, payload: '{"n":99}', clock: 0 } },
      ],
      { owner: 'old-worker', leaseMs: 60_000 },
    );
    const view = await runtime.run(task.id);
    expect(view.status).toBe('failed');
    expect(view.error?.code).toBe('REPLAY_DIVERGENCE');
    expect(view.error?.message).toContain('call-1');
    expect(view.error?.message).toContain('{"n":99}');
    expect(view.error?.message).toContain('{"n":1}');
  });
});
