import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { TaskRunner } from '../../src/durable/index.ts';
import { resolveAttention } from '../../src/durable/paused-actions.ts';
import { taskView } from '../../src/durable/task-view.ts';
import { defineTool, ToolRegistry } from '../../src/internal.ts';
import { isCorruptTask, readSummaryForView } from '../../src/internal.ts';
import type { AttentionDecision } from '../../src/internal.ts';
import type { JournalEntryInput, TaskStore } from '../../src/internal.ts';
import { journalAsDeadWorker, useDurableFixture } from './fixture.ts';

// After a crash, every unsafe call in doubt of one turn is raised in one needs_attention pause and decided in one
// round; a retry a person ordered runs to its end even when another call's doubt pauses the task meanwhile.

const PROGRAM = `return await Promise.all(['a', 'b', 'c', 'd'].map((to) => tools.send({ to })));`;
const TWO = `return await Promise.all(['a', 'b'].map((to) => tools.send({ to })));`;

function sendTools(sent: string[], ms = 0): ToolRegistry {
  return new ToolRegistry([
    defineTool({
      name: 'send',
      description: 'sends (unsafe)',
      effect: 'unsafe',
      execute: async (a, ctx) => {
        const { to } = a as { to: string };
        if (ms > 0) await sleep(ms);
        if (ctx.signal.aborted) throw new Error('aborted');
        sent.push(to);
        return `sent ${to}`;
      },
    }),
  ]);
}

const intent = (n: number, to: string): JournalEntryInput => ({
  type: 'tool_intent',
  data: { call_id: `call-${n}`, tool: 'tools.send', args: JSON.stringify({ to }) },
});

async function decide(store: TaskStore, id: string, decision: AttentionDecision): Promise<void> {
  const task = await store.getTask(id);
  if (!task) throw new Error('no task');
  const action = resolveAttention(task, await store.readJournal(id), decision, 'ops');
  await store.updateTask(id, action.patch, { expectedVersion: task.version, append: action.append });
}

async function attentionOf(store: TaskStore, id: string) {
  const task = await store.getTask(id);
  if (!task) throw new Error('no task');
  const journal = await readSummaryForView(store, task);
  if (isCorruptTask(journal)) throw new Error(journal.message);
  return taskView(task, { journal }).attention_calls.map((c) => [c.call_id, c.arguments]);
}

describe('needs_attention in one round', () => {
  const fx = useDurableFixture('attention-round');

  it('four unsafe calls in doubt after a crash are raised together and retried in one decision', async () => {
    const sent: string[] = [];
    const runner = new TaskRunner({ store: fx.store, driver: fx.driver, tools: sendTools(sent), owner: 'w' });
    const task = await fx.store.createTask({ kind: 'code', code: PROGRAM, language: 'javascript', seed: 1 });
    await journalAsDeadWorker(fx.store, task.id, [
      { type: 'code_block', data: { block: 0, code_hash: 'x' } },
      intent(1, 'a'),
      intent(2, 'b'),
      intent(3, 'c'),
      intent(4, 'd'),
    ]);
    expect(await runner.runTask(task.id)).toMatchObject({ status: 'paused', pauseReason: 'needs_attention' });
    expect(sent).toEqual([]);
    expect(await attentionOf(fx.store, task.id)).toEqual([
      ['call-1', { to: 'a' }],
      ['call-2', { to: 'b' }],
      ['call-3', { to: 'c' }],
      ['call-4', { to: 'd' }],
    ]);
    await decide(fx.store, task.id, { action: 'retry' });
    const done = await runner.runTask(task.id);
    expect(done).toMatchObject({ status: 'succeeded' });
    expect([...sent].sort()).toEqual(['a', 'b', 'c', 'd']);
    const pauses = (await fx.store.readJournal(task.id)).filter(
      (e) => e.type === 'control' && e.data.action === 'needs_attention',
    );
    expect(pauses).toHaveLength(1);
  });

  it('decided call by call, the task waits until every call in doubt has its decision', async () => {
    const sent: string[] = [];
    const runner = new TaskRunner({ store: fx.store, driver: fx.driver, tools: sendTools(sent), owner: 'w' });
    const task = await fx.store.createTask({ kind: 'code', code: PROGRAM, language: 'javascript', seed: 1 });
    await journalAsDeadWorker(fx.store, task.id, [
      intent(1, 'a'),
      { type: 'tool_outcome', data: { call_id: 'call-1', ok: true, payload: '"sent a"', clock: 0 } },
      intent(2, 'b'),
      intent(3, 'c'),
    ]);
    expect(await runner.runTask(task.id)).toMatchObject({ pauseReason: 'needs_attention' });
    expect((await attentionOf(fx.store, task.id)).map(([id]) => id)).toEqual(['call-2', 'call-3']);
    await expect(decide(fx.store, task.id, { action: 'retry', callId: 'call-1' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    // A skip without a call id takes its result for the first call only (a result is one call's).
    await decide(fx.store, task.id, { action: 'skip', result: 'sent b by hand' });
    expect(await fx.store.getTask(task.id)).toMatchObject({
      status: 'paused',
      pauseReason: 'needs_attention',
    });
    expect((await attentionOf(fx.store, task.id)).map(([id]) => id)).toEqual(['call-3']);
    await decide(fx.store, task.id, { action: 'retry', callId: 'call-3' });
    expect(await fx.store.getTask(task.id)).toMatchObject({ status: 'pending' });
    const done = await runner.runTask(task.id);
    expect(done).toMatchObject({ status: 'succeeded' });
    expect(JSON.parse(done?.result ?? 'null')).toEqual(['sent a', 'sent b by hand', 'sent c', 'sent d']);
    expect([...sent].sort()).toEqual(['c', 'd']);
  });

  it("a person's retry runs to its end while another call's doubt pauses the task", async () => {
    const sent: string[] = [];
    const runner = new TaskRunner({
      store: fx.store,
      driver: fx.driver,
      tools: sendTools(sent, 200),
      owner: 'w',
    });
    const task = await fx.store.createTask({ kind: 'code', code: TWO, language: 'javascript', seed: 1 });
    // An older journal: call-1 was raised alone and a person chose to retry it; call-2 is in doubt as well.
    await journalAsDeadWorker(fx.store, task.id, [
      intent(1, 'a'),
      intent(2, 'b'),
      {
        type: 'control',
        data: { action: 'needs_attention', call_id: 'call-1', tool: 'tools.send', args: '{"to":"a"}' },
      },
      { type: 'attention_decision', data: { call_id: 'call-1', action: 'retry', actor: 'ops', reason: '' } },
    ]);
    expect(await runner.runTask(task.id)).toMatchObject({ pauseReason: 'needs_attention' });
    expect(sent).toEqual(['a']);
    const journal = await fx.store.readJournal(task.id);
    expect(journal.filter((e) => e.type === 'tool_outcome').map((e) => e.data.call_id)).toEqual(['call-1']);
    expect((await attentionOf(fx.store, task.id)).map(([id]) => id)).toEqual(['call-2']);
  });
});
