// A sandbox driver that cannot start holds back no claim (task-runner.ts): the other drivers' tasks run, its own
// fail with its error, and the log says so once. Before, its rejected warm-up failed every claim, silently, for
// good (a fresh `codecall mcp` whose Python sandbox bubblewrap refused left every execute pending).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { createPythonDriver, createQuickJsDriver } from '../../src/sandbox/index.ts';
import type { QuickJsDriver } from '../../src/sandbox/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { ToolRegistry } from '../../src/tools/index.ts';

describe('a driver that cannot start', () => {
  let dir: string;
  let quickjs: QuickJsDriver;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-drivers-ready-'));
    quickjs = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
  });
  afterAll(async () => {
    await quickjs.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("holds back no other driver's tasks; its own fail with its error; the log is told once", async () => {
    // No such interpreter: its warm-up rejects (SANDBOX_UNAVAILABLE).
    const python = createPythonDriver({ warm: 1, python: join(dir, 'no-such-python3') });
    await expect(python.ready()).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    const store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
    const lines: string[] = [];
    const runtime = createRuntime({
      store,
      drivers: [quickjs, python],
      tools: new ToolRegistry([]),
      pollMs: 50,
      log: (line) => lines.push(line),
    });
    runtime.start();
    try {
      const js = await runtime.submit({ code: 'return 6 * 7' });
      expect(await runtime.wait(js.task_id, { until: 'terminal' })).toMatchObject({
        status: 'succeeded',
        result: { output: 42 },
      });
      const py = await runtime.submit({ code: 'return 1', language: 'python' });
      const failed = await runtime.wait(py.task_id, { until: 'terminal' });
      expect(failed).toMatchObject({ status: 'failed', error: { code: 'SANDBOX_UNAVAILABLE' } });
      expect(lines.filter((l) => l.startsWith('the python sandbox did not get ready: '))).toHaveLength(1);
    } finally {
      await runtime.close();
      await python.close();
      await store.close();
    }
  });
});
