// Issue 15, class 2, through the durable layer: a python task reads a source of nondeterminism, hands what it read
// to a tool, and is paused and resumed (the resumed run replays the journal in a new sandbox) or recovered after
// its worker died (another runtime replays what the dead one journaled). A source that read differently on the
// replay would change the tool's arguments: REPLAY_DIVERGENCE, never success.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import type { JournalEntryInput, TaskStore } from '../../src/internal.ts';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { PYTHON_SOURCES } from '../conformance/python-sources.ts';
import { journalAsDeadWorker } from './fixture.ts';

const probe = await probePython();

/** Reads the source three times: before a tool call, before a call that needs approval, after it. */
const program = (expr: string) => `a = ${expr}
tools.record(v=a)
b = ${expr}
tools.pay(v=b)
c = ${expr}
[a, b, c]`;

describe.skipIf(!probe.ok)(
  `python determinism through pause, resume and recovery${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    let driver: PythonDriver;
    let store: TaskStore;
    let dir: string;
    const recorded: unknown[] = [];
    const tools = new ToolRegistry([
      defineTool({
        name: 'record',
        description: 'records what the program read',
        effect: 'read',
        execute: (a) => {
          recorded.push((a as { v: unknown }).v);
          return null;
        },
      }),
      defineTool({
        name: 'pay',
        description: 'needs approval',
        effect: 'unsafe',
        requiresApproval: true,
        execute: () => 'paid',
      }),
    ]);
    beforeAll(async () => {
      driver = createPythonDriver({ warm: 1, ...(probe.ok ? { probe } : {}) });
      dir = await mkdtemp(join(tmpdir(), 'codecall-py-determinism-'));
      store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
    });
    afterAll(async () => {
      await store.close();
      await driver.close();
      await rm(dir, { recursive: true, force: true });
    });

    for (const [name, expr] of Object.entries(PYTHON_SOURCES)) {
      it(`${name}: reads the same after a pause and resume, and after a crash recovery`, async () => {
        const runtime = createRuntime({ store, drivers: [driver], tools });
        try {
          recorded.length = 0;
          const t = await runtime.submit({ code: program(expr), language: 'python', seed: 11 });
          await expect(runtime.run(t.task_id)).resolves.toMatchObject({ pause_reason: 'approval_required' });
          const journal = await store.readJournal(t.task_id);
          await runtime.decide(t.task_id, [{ approvalId: 'call-2', decision: 'approve' }]);
          const done = await runtime.run(t.task_id);
          expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
          // The first read was journaled as record's argument, the resumed run read it again.
          expect(recorded).toHaveLength(1);
          const [a] = (done.result as { output: string[] }).output;
          expect(a).toBe(recorded[0]);

          // A worker died after record's outcome: another recovers the task from what it journaled.
          const until = journal.findIndex((e) => e.type === 'tool_outcome') + 1;
          expect(until).toBeGreaterThan(0);
          const again = await store.createTask({
            kind: 'code',
            code: program(expr),
            language: 'python',
            seed: 11,
          });
          await journalAsDeadWorker(
            store,
            again.id,
            journal.slice(0, until).map((e) => ({ type: e.type, data: e.data }) as JournalEntryInput),
          );
          const recovered = await runtime.run(again.id);
          expect(recovered.status, JSON.stringify(recovered.error)).toBe('paused');
          expect(recorded).toHaveLength(1);
        } finally {
          await runtime.close();
        }
      }, 30_000);
    }
  },
);
