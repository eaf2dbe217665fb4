// Per-tenant rate limits and quotas in a Python task (ADR 0045): the host refuses a call past its tenant's limit
// as it does for JavaScript; the program catches it as a ToolError with `code` and `details` (with
// `retry_after_seconds`), sleeps that long and calls again.
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
  `tenant limits in Python tasks${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    let driver: PythonDriver;
    let store: TaskStore;
    let runtime: Runtime;
    let dir: string;
    const ran: string[] = [];
    beforeAll(async () => {
      driver = createPythonDriver({ warm: 1, ...(probe.ok ? { probe } : {}) });
      dir = await mkdtemp(join(tmpdir(), 'codecall-py-limits-'));
      store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
      const tool = (name: string) =>
        defineTool({
          name,
          description: 'Looks up.',
          input: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
          effect: 'read',
          execute: (a) => {
            const { key } = a as { key: string };
            ran.push(`${name} ${key}`);
            return key.toUpperCase();
          },
        });
      runtime = createRuntime({
        store,
        drivers: [driver],
        pollMs: 20,
        tools: new ToolRegistry([tool('lookup'), tool('report')]),
        toolRateLimits: [{ tenant: 'acme', tool: 'tools.lookup', rate: 5, per: 'second', burst: 1 }],
        toolQuotas: [{ tenant: 'acme', tool: 'tools.report', max: 1, period: 'month' }],
      });
      runtime.start();
    });
    afterAll(async () => {
      await runtime?.close();
      await store?.close();
      await driver?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('catches the refusal as a ToolError with retry_after_seconds, waits, and calls again', async () => {
      const code = `import asyncio
out = [tools.lookup(key="a")]
while True:
    try:
        out.append(tools.lookup(key="b"))
        break
    except ToolError as e:
        wait = e.details["retry_after_seconds"]
        out.append([type(e).__name__, e.code, e.details["limit"], 0 < wait <= 0.2])
        await asyncio.sleep(wait)
out.append(tools.report(key="r"))
try:
    tools.report(key="again")
except ToolError as e:
    out.append([e.code, e.details["max"], e.details["period"], e.details["retry_after_seconds"] > 0])
out`;
      const { task_id } = await runtime.submit({ code, language: 'python', tenant: 'acme' });
      const view = await runtime.wait(task_id);
      expect(view.status, JSON.stringify(view.error)).toBe('succeeded');
      const output = view.result?.output as unknown[];
      expect(output[0]).toBe('A');
      expect(output[1]).toEqual(['ToolError', 'TOOL_RATE_LIMITED', 'rate', true]);
      expect(output.slice(-3)).toEqual(['B', 'R', ['TOOL_QUOTA_EXCEEDED', 1, 'month', true]]);
      expect(ran).toEqual(['lookup a', 'lookup b', 'report r']);
      const journal = await store.readJournal(task_id);
      const refused = journal.flatMap((e) =>
        e.type === 'tool_intent' && e.data.over_budget ? [e.data.over_budget] : [],
      );
      expect(refused.filter((r) => r === 'tenant_quota')).toEqual(['tenant_quota']);
      expect(refused.filter((r) => r === 'tenant_rate').length).toBe(output.length - 4);
    });
  },
);
