import { describe, expect, it } from 'vitest';
import { TaskRunner } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/internal.ts';
import type { JournalEntry, TaskRecord, TaskStore } from '../../src/internal.ts';
import { useDurableFixture } from './fixture.ts';

// ADR 0056: a paused execution's VM is kept and resumed instead of replaying the journal, when the journal is what
// it was. A task resumed from the kept VM must end exactly as one resumed by replay: same result, same logs, same
// journal entry for entry; and every case the VM does not stand for replays.

const NOW = 1_750_000_000_000;

function tools(paid: unknown[]): ToolRegistry {
  return new ToolRegistry([
    defineTool({ name: 'echo', description: '', effect: 'read', execute: (a) => a }),
    defineTool({
      name: 'pay',
      description: 'unsafe, needs approval',
      effect: 'unsafe',
      requiresApproval: true,
      execute: (a) => {
        paid.push(a);
        return { paid: (a as { amount: number }).amount };
      },
    }),
  ]);
}

function runnerOf(store: TaskStore, budget: number, paid: unknown[] = []): TaskRunner {
  return new TaskRunner({
    store,
    driver: fx.driver,
    tools: tools(paid),
    owner: 'w',
    clock: () => NOW,
    pausedVmBudgetBytes: budget,
  });
}

const fx = useDurableFixture('paused-vm');

/** The journal as a replay must have written it too: what each entry says, not when it was stored. */
function comparable(journal: readonly JournalEntry[]): unknown[] {
  const id = journal[0]?.taskId ?? '';
  return journal.map(
    (e) => JSON.parse(JSON.stringify({ type: e.type, data: e.data }).replaceAll(id, 'TASK')) as unknown,
  );
}

const PROGRAM = `
let s = 0;
for (let i = 0; i < 20; i++) s += (await tools.echo({ i })).i;
console.log('before', s, Math.random());
const r = await tools.pay({ amount: s });
console.log('after', JSON.stringify(r), Date.now());
const more = await tools.echo({ last: Math.random() });
return { s, r, more };
`;

async function approveAll(runner: TaskRunner, store: TaskStore, id: string): Promise<TaskRecord | null> {
  const pending = (await store.readJournal(id)).filter((e) => e.type === 'approval_request');
  const decided = new Set(
    (await store.readJournal(id))
      .filter((e) => e.type === 'approval_decision')
      .map((e) => e.data.approval_id),
  );
  const open = pending.map((e) => String(e.data.approval_id)).filter((a) => !decided.has(a));
  return runner.decide(
    id,
    open.map((approvalId) => ({ approvalId, decision: 'approve' as const })),
    'ops',
  );
}

async function pauseAndApprove(runner: TaskRunner, code: string) {
  const task = await fx.store.createTask({ kind: 'code', code, language: 'javascript', seed: 7 });
  const paused = await runner.runTask(task.id);
  expect(paused).toMatchObject({ status: 'paused', pauseReason: 'approval_required' });
  const done = await approveAll(runner, fx.store, task.id);
  return { task: done, journal: await fx.store.readJournal(task.id) };
}

describe('paused VMs (ADR 0056)', () => {
  it('a task resumed from its paused VM ends as one resumed by replay: result, logs, journal', async () => {
    const kept = runnerOf(fx.store, 64 * 1024 * 1024);
    const replayed = runnerOf(fx.store, 0);
    const a = await pauseAndApprove(kept, PROGRAM);
    const b = await pauseAndApprove(replayed, PROGRAM);
    expect(kept.pausedVms?.counts).toMatchObject({ kept: 1, resumed: 1, stale: 0 });
    expect(replayed.pausedVms).toBeNull();
    expect(a.task?.status).toBe('succeeded');
    expect(a.task?.result).toEqual(b.task?.result);
    const lines = (t: TaskRecord | null) => t?.executionLog?.map((l) => `${l.level} ${l.message}`);
    expect(lines(a.task)).toEqual(lines(b.task));
    expect(lines(a.task)?.map((l) => l.split(' ')[1])).toEqual(['before', 'after']);
    const ja = comparable(a.journal);
    const jb = comparable(b.journal);
    expect(ja.length).toBe(jb.length);
    for (let i = 0; i < ja.length; i++) expect(ja[i], `entry ${i + 1}`).toEqual(jb[i]);
  });

  it('a rejected call resumes from the VM as by replay (the guest catches the rejection)', async () => {
    const code = `try { await tools.pay({ amount: 1 }); return 'paid'; } catch (e) { return e.name + ': ' + e.message; }`;
    const run = async (runner: TaskRunner) => {
      const task = await fx.store.createTask({ kind: 'code', code, language: 'javascript', seed: 7 });
      await runner.runTask(task.id);
      const [req] = (await fx.store.readJournal(task.id)).filter((e) => e.type === 'approval_request');
      const done = await runner.decide(
        task.id,
        [{ approvalId: String(req?.data.approval_id), decision: 'reject' }],
        'ops',
      );
      return { done, journal: comparable(await fx.store.readJournal(task.id)) };
    };
    const kept = runnerOf(fx.store, 64 * 1024 * 1024);
    const a = await run(kept);
    const b = await run(runnerOf(fx.store, 0));
    expect(kept.pausedVms?.counts).toMatchObject({ resumed: 1 });
    expect(a.done?.result).toEqual(b.done?.result);
    expect(a.journal).toEqual(b.journal);
  });

  it('replays when the VM was not kept (over the budget), or is gone (another process)', async () => {
    const tiny = runnerOf(fx.store, 1024);
    const a = await pauseAndApprove(tiny, PROGRAM);
    expect(tiny.pausedVms?.counts).toMatchObject({ kept: 0, resumed: 0, misses: 2 });
    // Paused by one runner, resumed by another (a restart): nothing kept there, the journal replays.
    const first = runnerOf(fx.store, 64 * 1024 * 1024);
    const task = await fx.store.createTask({ kind: 'code', code: PROGRAM, language: 'javascript', seed: 7 });
    await first.runTask(task.id);
    expect(first.pausedVms?.size).toBe(1);
    const second = runnerOf(fx.store, 64 * 1024 * 1024);
    const done = await approveAll(second, fx.store, task.id);
    expect(second.pausedVms?.counts).toMatchObject({ resumed: 0, misses: 1 });
    expect(done?.result).toEqual(a.task?.result);
    expect(comparable(await fx.store.readJournal(task.id))).toEqual(comparable(a.journal));
  });

  it('replays when the journal went on with more than the calls that were out', async () => {
    const runner = runnerOf(fx.store, 64 * 1024 * 1024);
    const task = await fx.store.createTask({ kind: 'code', code: PROGRAM, language: 'javascript', seed: 7 });
    await runner.runTask(task.id);
    // An entry about another call, journaled by someone else while the task was paused.
    const paused = await fx.store.getTask(task.id);
    await fx.store.updateTask(
      task.id,
      {},
      {
        expectedVersion: paused?.version ?? 0,
        append: [{ type: 'control', data: { action: 'not_started', call_id: 'call-1' } }],
      },
    );
    const done = await approveAll(runner, fx.store, task.id);
    expect(runner.pausedVms?.counts).toMatchObject({ resumed: 0, stale: 1 });
    expect(done?.status).toBe('succeeded');
  });

  it('a guest cannot change a call it made before the pause: the call issued again is the journaled one', async () => {
    const paid: unknown[] = [];
    const runner = runnerOf(fx.store, 64 * 1024 * 1024, paid);
    // The guest changes the arguments object after the call was made, and rewrites what it can reach of its
    // runtime, while the call waits for approval.
    const code = `
      const a = { amount: 1 };
      const p = tools.pay(a);
      a.amount = 1_000_000;
      try { globalThis.tools = { pay: () => 'forged' }; } catch {}
      return await p;`;
    const task = await fx.store.createTask({ kind: 'code', code, language: 'javascript', seed: 7 });
    expect(await runner.runTask(task.id)).toMatchObject({ pauseReason: 'approval_required' });
    const done = await approveAll(runner, fx.store, task.id);
    expect(runner.pausedVms?.counts).toMatchObject({ resumed: 1 });
    expect(done?.result).toBe('{"paid":1}');
    expect(paid).toEqual([{ amount: 1 }]);
    const intents = (await fx.store.readJournal(task.id)).filter((e) => e.type === 'tool_intent');
    expect(intents.map((e) => e.data.args)).toEqual(['{"amount":1}']);
  });
});
