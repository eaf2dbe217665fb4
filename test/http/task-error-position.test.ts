// A failed task's view carries what `exec --json` prints of a program's error (issue 19): its class (`name`) and
// where it was thrown (`line`, `column`, 1-based, in the program as written), through the store, GET
// /api/v1/tasks/{id} (whose schema serializes the view) and `tasks show`; for JavaScript, TypeScript and Python.
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import { createQuickJsDriver, runProgram } from '../../src/internal.ts';
import type { TaskView } from '../../src/api/index.ts';
import { taskDetailText } from '../../src/cli/task-view.ts';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import { until } from '../durable/fixture.ts';
import { useDurableFixture } from '../durable/fixture.ts';
import { useApiFixture } from './api-fixture.ts';

const probe = await probePython();

describe('GET /api/v1/tasks/{id}: a program error with its class, line and column', () => {
  const fx = useApiFixture('task-error-position');

  async function failed(body: Record<string, unknown>): Promise<TaskView> {
    const key = await fx.key('acme');
    const created = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: key.headers,
      payload: { seed: 1, ...body },
    });
    expect(created.statusCode).toBe(201);
    const id = created.json<{ task_id: string }>().task_id;
    let view: TaskView | undefined;
    await until(async () => {
      const res = await fx.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}`, headers: key.headers });
      view = res.json<TaskView>();
      return view.status === 'failed';
    }, 10_000);
    return view as unknown as TaskView;
  }

  /** What exec gives for the program (the driver's own answer), with the view's fields. */
  async function execError(code: string, language: 'javascript' | 'typescript') {
    const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    try {
      const r = await runProgram({ driver, code, language });
      if (r.status !== 'failed') throw new Error('the program did not fail');
      const { code: errorCode, message, name, line, column } = r.error;
      return { code: errorCode, message, name, line, column };
    } finally {
      await driver.close();
    }
  }

  it('JavaScript: a TypeError where it was thrown, as exec says', async () => {
    const code = 'const a = 1;\nconst b = null;\nreturn a + b.c;';
    const view = await failed({ code });
    expect(view.error).toEqual(await execError(code, 'javascript'));
    expect(view.error).toMatchObject({ code: 'GUEST_ERROR', name: 'TypeError', line: 3, column: 12 });
    expect(taskDetailText(view)).toContain(
      "error:       GUEST_ERROR: cannot read property 'c' of null (line 3, column 12)",
    );
  });

  it('TypeScript: placed in the program as written, types and all', async () => {
    const code = 'const n: number = 2;\ninterface P { x: number }\n  throw new RangeError("bad " + n);';
    const view = await failed({ code, language: 'typescript' });
    expect(view.error).toEqual(await execError(code, 'typescript'));
    expect(view.error).toMatchObject({ code: 'GUEST_ERROR', name: 'RangeError', line: 3 });
  });

  it('a SyntaxError is placed too', async () => {
    const code = 'const x = 1;\nreturn x +;';
    const view = await failed({ code });
    expect(view.error).toEqual(await execError(code, 'javascript'));
    expect(view.error).toMatchObject({ code: 'SYNTAX_ERROR', name: 'SyntaxError', line: 2 });
  });
});

describe.skipIf(!probe.ok)(`a Python task's error${probe.ok ? '' : ` (skipped: ${probe.reason})`}`, () => {
  const fx = useDurableFixture('task-error-position-python');

  it('carries the exception class and its line', async () => {
    const driver = createPythonDriver({ warm: 1 });
    const runtime = createRuntime({ store: fx.store, drivers: [driver], tools: new ToolRegistry([]) });
    try {
      const t = await runtime.submit({ code: 'x = 1\ny = [x]\nz = y[5]\n', language: 'python', seed: 1 });
      const view = await runtime.run(t.task_id);
      expect(view.status).toBe('failed');
      expect(view.error).toMatchObject({ code: 'GUEST_ERROR', name: 'IndexError', line: 3 });
      expect(taskDetailText(view)).toContain('(line 3');
    } finally {
      await runtime.close();
      await driver.close();
    }
  }, 30_000);
});
