import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { TaskRunner } from '../../src/durable/index.ts';
import { resumePaused } from '../../src/durable/paused-actions.ts';
import { defineTool, ToolRegistry } from '../../src/internal.ts';
import type { JournalEntry, ToolContext } from '../../src/internal.ts';
import { until, useDurableFixture } from './fixture.ts';
import type { DurableFixture } from './fixture.ts';

// A pause (for approval, by request, for shutdown) ends the execution, but a call that already started runs to its
// end and journals its outcome: aborted, it would come back as a call in doubt (needs_attention) with no crash.
// A cancel still stops it at once.

interface Ledger {
  readonly charged: string[];
  readonly aborted: string[];
}

/** Waits `ms`, then records the side effect, or that it was stopped (its ctx.signal aborted) and gave up. */
function slowly(ledger: Ledger, ms: number, says: string) {
  return async (a: unknown, ctx: ToolContext) => {
    const { who } = a as { who: string };
    await sleep(ms);
    if (ctx.signal.aborted) {
      ledger.aborted.push(who);
      throw new Error('aborted');
    }
    ledger.charged.push(who);
    return `${says} ${who}`;
  };
}

function tools(ledger: Ledger, ms: number): ToolRegistry {
  return new ToolRegistry([
    defineTool({
      name: 'charge',
      description: 'charges (unsafe, slow, needs approval)',
      effect: 'unsafe',
      requiresApproval: true,
      execute: slowly(ledger, ms, 'charged'),
    }),
    defineTool({
      name: 'slow',
      description: 'unsafe, slow, no approval',
      effect: 'unsafe',
      execute: slowly(ledger, ms, 'done'),
    }),
  ]);
}

/** A ledger and a runner whose tools take `ms`. */
function setUp(fx: DurableFixture, ms: number) {
  const ledger: Ledger = { charged: [], aborted: [] };
  const runner = new TaskRunner({ store: fx.store, driver: fx.driver, tools: tools(ledger, ms), owner: 'w' });
  return { ledger, runner };
}

/** Starts the task's run and resolves once its first call's intent is journaled (the call is running). */
async function startRunning(fx: DurableFixture, runner: TaskRunner, code: string) {
  const task = await fx.store.createTask({ kind: 'code', code, language: 'javascript', seed: 1 });
  const running = runner.runTask(task.id);
  await until(async () => (await fx.store.readJournal(task.id)).some((e) => e.type === 'tool_intent'));
  return { task, running };
}

const outcomes = (journal: readonly JournalEntry[]) =>
  journal.filter((e) => e.type === 'tool_outcome').map((e) => e.data.call_id);
const attention = (journal: readonly JournalEntry[]) =>
  journal.filter((e) => e.type === 'control' && e.data.action === 'needs_attention');

describe('a pause lets a started call finish', () => {
  const fx = useDurableFixture('pause-finish');

  it('two approvals of one Promise.all decided one at a time: no call in doubt, each charged once', async () => {
    const { ledger, runner } = setUp(fx, 200);
    const code = `return await Promise.all([tools.charge({ who: 'a' }), tools.charge({ who: 'b' })]);`;
    const task = await fx.store.createTask({ kind: 'code', code, language: 'javascript', seed: 1 });
    expect(await runner.runTask(task.id)).toMatchObject({ pauseReason: 'approval_required' });
    const [a, b] = (await fx.store.readJournal(task.id))
      .filter((e) => e.type === 'approval_request')
      .map((e) => String(e.data.approval_id));
    // a is approved: it starts, b still waits, so the task pauses again ~20 ms later while a runs.
    const again = await runner.decide(task.id, [{ approvalId: String(a), decision: 'approve' }], 'ops');
    expect(again).toMatchObject({ status: 'paused', pauseReason: 'approval_required' });
    expect(ledger).toEqual({ charged: ['a'], aborted: [] });
    expect(outcomes(await fx.store.readJournal(task.id))).toEqual([a]);
    const done = await runner.decide(task.id, [{ approvalId: String(b), decision: 'approve' }], 'ops');
    expect(done).toMatchObject({ status: 'succeeded' });
    expect(ledger).toEqual({ charged: ['a', 'b'], aborted: [] });
    expect(attention(await fx.store.readJournal(task.id))).toEqual([]);
  });

  it('a pause by request while a call runs: the call journals its outcome, the resume replays it', async () => {
    const { ledger, runner } = setUp(fx, 300);
    const code = `const x = await tools.slow({ who: 'x' });\nreturn [x, await tools.slow({ who: 'y' })];`;
    const { task, running } = await startRunning(fx, runner, code);
    expect(runner.pause(task.id, 'ops')).toBe(true);
    expect(await running).toMatchObject({ status: 'paused', pauseReason: 'user_request' });
    expect(ledger).toEqual({ charged: ['x'], aborted: [] });
    expect(outcomes(await fx.store.readJournal(task.id))).toEqual(['call-1']);
    const paused = await fx.store.getTask(task.id);
    if (!paused) throw new Error('no task');
    const resume = resumePaused(paused, 'ops');
    await fx.store.updateTask(task.id, resume.patch, {
      expectedVersion: paused.version,
      append: resume.append,
    });
    expect(await runner.runTask(task.id)).toMatchObject({
      status: 'succeeded',
    });
    expect(ledger).toEqual({ charged: ['x', 'y'], aborted: [] });
    expect(attention(await fx.store.readJournal(task.id))).toEqual([]);
  });

  it('a cancel still stops a running call at once (its ctx.signal is aborted)', async () => {
    const { ledger, runner } = setUp(fx, 300);
    const code = `return await tools.slow({ who: 'z' });`;
    const { task, running } = await startRunning(fx, runner, code);
    expect(runner.cancel(task.id, 'ops')).toBe(true);
    expect(await running).toMatchObject({ status: 'cancelled' });
    await until(() => ledger.aborted.length > 0);
    expect(ledger).toEqual({ charged: [], aborted: ['z'] });
  });
});
