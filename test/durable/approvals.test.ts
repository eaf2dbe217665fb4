import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeValue } from '../../src/codec/index.ts';
import { runJournaled, TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/internal.ts';
import type { JournalEntryInput, QuickJsDriver, TaskStore } from '../../src/internal.ts';
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

  it('treats an approved unsafe call that had started when its worker died as lost (needs attention)', async () => {
    const runs: string[] = [];
    const pay = defineTool({
      name: 'pay',
      description: 'pays',
      effect: 'unsafe',
      requiresApproval: true,
      execute: () => {
        runs.push('pay');
        return 'paid';
      },
    });
    const registry = new ToolRegistry([pay]);
    const base: JournalEntryInput[] = [
      { type: 'tool_intent', data: { call_id: 'call-1', tool: 'tools.pay', args: '{}' } },
      {
        type: 'approval_request',
        data: { approval_id: 'call-1', call_id: 'call-1', tool: 'tools.pay', args: '{}' },
      },
      {
        type: 'approval_decision',
        data: { approval_id: 'call-1', decision: 'approve', actor: 'ops', reason: '' },
      },
    ];
    const attempt = (recorded: JournalEntryInput[]) =>
      runJournaled({
        driver,
        request: {
          code: 'return await tools.pay({})',
          language: 'javascript',
          tools: registry.bindings,
          seed: 1,
        },
        live: registry.host(),
        policy: { effectOf: () => 'unsafe', needsApproval: () => true },
        journal: { recorded, append: () => Promise.resolve() },
        startClock: 0,
      });
    // Approved, never started: it runs now.
    const fresh = await attempt(base);
    expect(fresh.status === 'succeeded' && fresh.value).toBe('paid');
    expect(runs).toEqual(['pay']);
    // Approved and started, outcome lost: it may have paid already, so a human decides.
    const started: JournalEntryInput = {
      type: 'control',
      data: { action: 'approved_call_started', call_id: 'call-1' },
    };
    const lost = await attempt([...base, started]);
    expect(lost.status === 'failed' && lost.error.code).toBe('NEEDS_ATTENTION');
    expect(runs).toEqual(['pay']);
  });
});
