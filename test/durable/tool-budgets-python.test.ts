// Tool budgets in a Python task (ADR 0044): the host refuses a call past its budget as it does for JavaScript, and
// the program catches it as a ToolError with `code` and `details`; an asyncio.gather of three calls with two left
// runs exactly the first two, and a resumed task (input.wait) has what it had left.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import type { Runtime } from '../../src/api/index.ts';
import type { TaskStore } from '../../src/internal.ts';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';

const probe = await probePython();

describe.skipIf(!probe.ok)(
  `tool budgets in Python tasks${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    let driver: PythonDriver;
    let store: TaskStore;
    let runtime: Runtime;
    let dir: string;
    const ran: string[] = [];
    beforeAll(async () => {
      driver = createPythonDriver({ warm: 1, ...(probe.ok ? { probe } : {}) });
      dir = await mkdtemp(join(tmpdir(), 'codecall-py-budgets-'));
      store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
      runtime = createRuntime({
        store,
        drivers: [driver],
        pollMs: 20,
        tools: new ToolRegistry([
          defineTool({
            name: 'lookup',
            description: 'Looks up.',
            input: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
            effect: 'read',
            execute: async (a) => {
              const { key } = a as { key: string };
              await new Promise((r) => setTimeout(r, key === 'b' ? 30 : 1));
              ran.push(key);
              return key.toUpperCase();
            },
          }),
        ]),
      });
      runtime.start();
    });
    afterAll(async () => {
      await runtime?.close();
      await store?.close();
      await driver?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('refuses the call past the budget; the program catches it, and a resumed task has what it had left', async () => {
      ran.length = 0;
      const code = `import asyncio
first = tools.lookup(key="a")
input.wait("go")
results = await asyncio.gather(
    tools.lookup_async(key="b"), tools.lookup_async(key="c"), tools.lookup_async(key="d"),
    return_exceptions=True,
)
out = [first]
for r in results:
    out.append(r if isinstance(r, str) else [type(r).__name__, r.code, r.details["budget"], r.details["used"]])
out`;
      const { task_id } = await runtime.submit({
        code,
        language: 'python',
        constraints: { budgets: { maxCalls: 3 } },
      });
      const paused = await runtime.wait(task_id);
      expect(paused, JSON.stringify(paused.error)).toMatchObject({
        status: 'paused',
        pause_reason: 'awaiting_input',
      });
      expect(paused.budgets?.used).toMatchObject({ calls: 1 });
      await runtime.provideInput(task_id, 'go', null);
      const view = await runtime.wait(task_id);
      expect(view.status, JSON.stringify(view.error)).toBe('succeeded');
      expect(view.result?.output).toEqual([
        'A',
        'B',
        'C',
        ['ToolError', 'TOOL_BUDGET_EXCEEDED', 'max_calls', 3],
      ]);
      expect(ran).toEqual(['a', 'c', 'b']);
      const journal = await store.readJournal(task_id);
      const refused = journal.filter((e) => e.type === 'tool_intent' && e.data.over_budget === 'max_calls');
      expect(refused).toHaveLength(1);
    });
  },
);
