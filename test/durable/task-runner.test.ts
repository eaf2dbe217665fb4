import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeValue } from '../../src/codec/index.ts';
import { TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver, TaskStore } from '../../src/internal.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';

// A task paused in the middle of its tool calls resumes by replay: no completed call runs again.

const PROGRAM = `
const out = [];
for (let i = 0; i < 6; i++) out.push(await tools.step({ i }));
const extra = await Promise.all([tools.step({ i: 10 }), tools.step({ i: 11 })]);
return { out, extra, r: Math.random(), t: Date.now() };
`;

describe('TaskRunner over SQLite (pause, resume, cancel)', () => {
  let driver: QuickJsDriver;
  let dir: string;
  let store: TaskStore;
  const calls: number[] = [];
  let runner: TaskRunner;
  let onStep: (i: number) => void = () => undefined;

  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 1 });
    await driver.ready();
    dir = await mkdtemp(join(tmpdir(), 'codecall-runner-'));
    store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
    const step = defineTool({
      name: 'step',
      description: 'one step',
      effect: 'unsafe',
      async execute(args) {
        const { i } = args as { i: number };
        calls.push(i);
        onStep(i);
        await new Promise((r) => setTimeout(r, 20));
        return i * 10;
      },
    });
    runner = new TaskRunner({
      store,
      driver,
      tools: new ToolRegistry([step]),
      owner: 'test-runner',
      leaseMs: 2_000,
    });
  });
  afterAll(async () => {
    await store.close();
    await driver.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('pauses at once, holds nothing, and resumes by replay without repeating a call', async () => {
    calls.length = 0;
    const task = await store.createTask({ kind: 'code', code: PROGRAM, language: 'javascript', seed: 7 });
    onStep = (i) => {
      if (i === 3) runner.pause(task.id);
    };
    const paused = await runner.runNext();
    onStep = () => undefined;
    expect(paused).toMatchObject({ id: task.id, status: 'paused', pauseReason: 'user_request' });
    expect(calls).toEqual([0, 1, 2, 3]);

    await store.updateTask(
      task.id,
      { status: 'pending' },
      { expectedVersion: (await store.getTask(task.id))!.version },
    );
    const done = await runner.runNext();
    expect(done).toMatchObject({ id: task.id, status: 'succeeded' });
    // Step 3 was in flight at the pause; unsafe, so it was not repeated (its outcome was journaled first).
    expect(calls).toEqual([0, 1, 2, 3, 4, 5, 10, 11]);
    const value = decodeValue(done!.result!) as { out: number[]; extra: number[] };
    expect(value.out).toEqual([0, 10, 20, 30, 40, 50]);
    expect(value.extra).toEqual([100, 110]);

    const journal = await store.readJournal(task.id);
    expect(journal.filter((e) => e.type === 'tool_outcome')).toHaveLength(8);
    expect(journal.filter((e) => e.type === 'control').map((e) => e.data.action)).toEqual([
      'attempt',
      'pause',
      'attempt',
    ]);
  });

  it('gives a resumed task the same random numbers and clock as an uninterrupted run', async () => {
    const straight = await store.createTask({
      kind: 'code',
      code: PROGRAM,
      language: 'javascript',
      seed: 99,
    });
    const a = await runner.runNext();
    expect(a?.id).toBe(straight.id);
    const interrupted = await store.createTask({
      kind: 'code',
      code: PROGRAM,
      language: 'javascript',
      seed: 99,
    });
    onStep = (i) => {
      if (i === 2) runner.pause(interrupted.id);
    };
    await runner.runNext();
    onStep = () => undefined;
    const t = (await store.getTask(interrupted.id))!;
    await store.updateTask(t.id, { status: 'pending' }, { expectedVersion: t.version });
    const b = await runner.runNext();
    const va = decodeValue(a!.result!) as { r: number; out: number[] };
    const vb = decodeValue(b!.result!) as { r: number; out: number[] };
    expect(vb.r).toBe(va.r);
    expect(vb.out).toEqual(va.out);
  });

  it('cancels a running task', async () => {
    const task = await store.createTask({ kind: 'code', code: PROGRAM, language: 'javascript', seed: 1 });
    onStep = (i) => {
      if (i === 1) runner.cancel(task.id);
    };
    const ended = await runner.runNext();
    onStep = () => undefined;
    expect(ended).toMatchObject({ id: task.id, status: 'cancelled' });
    await expect(
      store.updateTask(task.id, { status: 'pending' }, { expectedVersion: ended!.version }),
    ).rejects.toMatchObject({ code: 'ILLEGAL_TRANSITION' });
  });

  it('fails a task whose program fails, with the guest error code', async () => {
    const task = await store.createTask({ kind: 'code', code: 'null.x', language: 'javascript', seed: 1 });
    const ended = await runner.runNext();
    expect(ended).toMatchObject({ id: task.id, status: 'failed', error: { code: 'GUEST_ERROR' } });
  });
});
