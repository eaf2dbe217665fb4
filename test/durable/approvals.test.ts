import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeValue } from '../../src/codec/index.ts';
import { TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/index.ts';
import type { QuickJsDriver, TaskStore } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';

const PROGRAM = `
const before = await tools.lookup({ q: 'balance' });
const results = await Promise.allSettled([
  tools.transfer({ to: 'alice', amount: 10 }),
  tools.transfer({ to: 'bob', amount: 2000 }),
  tools.lookup({ q: 'rates' }),
]);
return {
  before,
  outcomes: results.map((r) => (r.status === 'fulfilled' ? r.value : r.reason.name + ': ' + r.reason.code)),
};
`;

describe('approvals', () => {
  let driver: QuickJsDriver;
  let dir: string;
  let store: TaskStore;
  const ran: string[] = [];
  let runner: TaskRunner;
  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    dir = await mkdtemp(join(tmpdir(), 'codecall-approvals-'));
    store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
    const tools = new ToolRegistry([
      defineTool({
        name: 'lookup',
        description: 'reads',
        effect: 'read',
        execute: (a) => {
          ran.push(`lookup ${(a as { q: string }).q}`);
          return `${(a as { q: string }).q}-ok`;
        },
      }),
      defineTool({
        name: 'transfer',
        description: 'moves money',
        effect: 'unsafe',
        requiresApproval: true,
        execute: (a) => {
          const { to, amount } = a as { to: string; amount: number };
          ran.push(`transfer ${to} ${amount}`);
          return `sent ${amount} to ${to}`;
        },
      }),
    ]);
    runner = new TaskRunner({ store, driver, tools, owner: 'approvals' });
  });
  afterAll(async () => {
    await store.close();
    await driver.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('collects the requests of one Promise.all into one pause, then runs approved and rejects the others', async () => {
    const task = await store.createTask({ kind: 'code', code: PROGRAM, language: 'javascript', seed: 1 });
    const paused = await runner.runTask(task.id);
    expect(paused).toMatchObject({ status: 'paused', pauseReason: 'approval_required' });
    expect(ran.filter((r) => r.startsWith('transfer'))).toEqual([]);
    const requests = (await store.readJournal(task.id)).filter((e) => e.type === 'approval_request');
    expect(requests.map((e) => e.data.tool)).toEqual(['tools.transfer', 'tools.transfer']);
    const [alice, bob] = requests.map((e) => String(e.data.approval_id));

    await expect(
      runner.decide(task.id, [{ approvalId: 'call-99', decision: 'approve' }], 'ops'),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    const done = await runner.decide(
      task.id,
      [
        { approvalId: alice!, decision: 'approve' },
        { approvalId: bob!, decision: 'reject', reason: 'too much' },
      ],
      'ops@example.com',
    );
    expect(done?.status).toBe('succeeded');
    expect(decodeValue(done!.result!)).toEqual({
      before: 'balance-ok',
      outcomes: ['sent 10 to alice', 'ToolRejectedError: TOOL_REJECTED', 'rates-ok'],
    });
    expect(ran.filter((r) => r.startsWith('transfer'))).toEqual(['transfer alice 10']);
    // The lookup before the pause ran once; replay served it from the journal.
    expect(ran.filter((r) => r === 'lookup balance')).toHaveLength(1);
    const decisions = (await store.readJournal(task.id)).filter((e) => e.type === 'approval_decision');
    expect(decisions.map((e) => [e.data.decision, e.data.actor])).toEqual([
      ['approve', 'ops@example.com'],
      ['reject', 'ops@example.com'],
    ]);
  });

  it('refuses decisions on a task that is not waiting for approval', async () => {
    const task = await store.createTask({ kind: 'code', code: 'return 1', language: 'javascript', seed: 1 });
    await expect(runner.decide(task.id, [], 'ops')).rejects.toMatchObject({ code: 'ILLEGAL_TRANSITION' });
  });
});
