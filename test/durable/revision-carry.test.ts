import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskRunner } from '../../src/durable/index.ts';
import { provideInput, resolveAttention } from '../../src/durable/paused-actions.ts';
import { decodeValue } from '../../src/codec/index.ts';
import { defineTool, ToolRegistry } from '../../src/internal.ts';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import type { AttentionDecision } from '../../src/api/index.ts';
import type { CodeTaskInput, JournalEntry, TaskRecord, TaskStore } from '../../src/internal.ts';
import { journalAsDeadWorker, useDurableFixture } from './fixture.ts';
import type { DurableFixture } from './fixture.ts';

// A revision of a failed task (issue 18, ADR 0034): the calls the earlier task completed are taken over (same
// tool, same arguments in canonical form, per tool in the order asked), only what is new runs. A call of a
// `keyed`/`unsafe` tool with other arguments than an earlier completed one waits for a human.

interface World {
  readonly paid: unknown[];
  readonly reads: unknown[];
  readonly tools: ToolRegistry;
  readonly runner: TaskRunner;
}

function world(fx: DurableFixture): World {
  const paid: unknown[] = [];
  const reads: unknown[] = [];
  const tools = new ToolRegistry([
    defineTool({
      name: 'pay',
      description: 'pays (unsafe)',
      effect: 'unsafe',
      execute: (a) => {
        paid.push(a);
        return { receipt: `r${paid.length}` };
      },
    }),
    defineTool({
      name: 'refund',
      description: 'refunds (unsafe, a revision may change its arguments)',
      effect: 'unsafe',
      revisedCall: 'run',
      execute: (a) => {
        paid.push({ refund: a });
        return 'refunded';
      },
    }),
    defineTool({
      name: 'balance',
      description: 'reads the balance',
      effect: 'read',
      execute: (a) => {
        reads.push(a);
        return 100 - paid.length;
      },
    }),
  ]);
  return {
    paid,
    reads,
    tools,
    runner: new TaskRunner({ store: fx.store, driver: fx.driver, tools, owner: 'w' }),
  };
}

async function runCode(fx: DurableFixture, w: World, code: string, extra: Partial<CodeTaskInput> = {}) {
  const task = await fx.store.createTask({ kind: 'code', code, language: 'javascript', seed: 1, ...extra });
  return ran(w.runner, task.id);
}

async function ran(runner: TaskRunner, id: string): Promise<TaskRecord> {
  const t = await runner.runTask(id);
  if (!t) throw new Error(`task ${id} was not run`);
  return t;
}

const intents = (journal: readonly JournalEntry[]) => journal.filter((e) => e.type === 'tool_intent');
const carried = (journal: readonly JournalEntry[]) =>
  intents(journal).filter((e) => e.type === 'tool_intent' && e.data.carried_from !== undefined);
async function decide(store: TaskStore, id: string, decision: AttentionDecision): Promise<void> {
  const task = await store.getTask(id);
  if (!task) throw new Error('no task');
  const action = resolveAttention(task, await store.readJournal(id), decision, 'alice');
  await store.updateTask(id, action.patch, { expectedVersion: task.version, append: action.append });
}

const output = (t: TaskRecord): unknown => (t.result === null ? undefined : decodeValue(t.result));

const FAILS_AFTER_THREE = `
  const a = await tools.pay({ to: 'a', amount: 100 });
  const b = await tools.balance({ account: 'main' });
  const c = await tools.pay({ amount: 200, to: 'b' });
  return totl + 1;`;

describe('a revised task takes over what its earlier task completed', () => {
  const fx = useDurableFixture('revision-carry');

  it('a program that failed after three calls, fixed: the three are not run again, the new one is', async () => {
    const w = world(fx);
    const first = await runCode(fx, w, FAILS_AFTER_THREE);
    expect(first).toMatchObject({ status: 'failed', error: { code: 'GUEST_ERROR' } });
    expect(w.paid).toHaveLength(2);
    // Same calls (one with its keys in another order), then one more.
    const fixed = `
      const a = await tools.pay({ amount: 100, to: 'a' });
      const b = await tools.balance({ account: 'main' });
      const c = await tools.pay({ to: 'b', amount: 200 });
      const d = await tools.pay({ to: 'c', amount: 5 });
      return [a.receipt, b, c.receipt, d.receipt];`;
    const revised = await runCode(fx, w, fixed, { revisionOf: first.id });
    expect(revised.status).toBe('succeeded');
    expect(output(revised)).toEqual(['r1', 99, 'r2', 'r3']);
    expect(w.paid).toEqual([
      { to: 'a', amount: 100 },
      { amount: 200, to: 'b' },
      { to: 'c', amount: 5 },
    ]);
    expect(w.reads).toHaveLength(1);
    const journal = await fx.store.readJournal(revised.id);
    expect(carried(journal).map((e) => e.type === 'tool_intent' && e.data.carried_from)).toEqual([
      { task_id: first.id, call_id: 'call-1' },
      { task_id: first.id, call_id: 'call-2' },
      { task_id: first.id, call_id: 'call-3' },
    ]);
    // The offers are journaled before the program's block, so a resume needs nothing of the earlier task.
    const types = journal.map((e) => e.type);
    expect(types.indexOf('carry_offer')).toBeLessThan(types.indexOf('code_block'));
    expect(types.filter((t) => t === 'carry_offer')).toHaveLength(3);
  });

  it('a revision of a revision is offered every attempt, each call once, with its first origin', async () => {
    const w = world(fx);
    const first = await runCode(fx, w, `await tools.pay({ to: 'x', amount: 1 }); throw new Error('one');`);
    const second = await runCode(
      fx,
      w,
      `await tools.pay({ to: 'x', amount: 1 }); await tools.pay({ to: 'y', amount: 2 }); throw new Error('two');`,
      { revisionOf: first.id },
    );
    expect(second.status).toBe('failed');
    const third = await runCode(
      fx,
      w,
      `const y = await tools.pay({ to: 'y', amount: 2 }); const x = await tools.pay({ to: 'x', amount: 1 });
       return [x.receipt, y.receipt];`,
      { revisionOf: second.id },
    );
    expect(third.status).toBe('succeeded');
    expect(output(third)).toEqual(['r1', 'r2']);
    expect(w.paid).toHaveLength(2);
    const origins = carried(await fx.store.readJournal(third.id)).map(
      (e) => e.type === 'tool_intent' && e.data.carried_from,
    );
    expect(origins).toEqual([
      { task_id: second.id, call_id: 'call-2' },
      { task_id: first.id, call_id: 'call-1' },
    ]);
  });

  it('Promise.all revised in another order: matched by the calls, not by the order outcomes came', async () => {
    const w = world(fx);
    const first = await runCode(
      fx,
      w,
      `await Promise.all([tools.pay({ to: 'a', amount: 1 }), tools.pay({ to: 'b', amount: 2 }), tools.pay({ to: 'c', amount: 3 })]);
       throw new Error('after the group');`,
    );
    expect(w.paid).toHaveLength(3);
    const revised = await runCode(
      fx,
      w,
      `const r = await Promise.all([tools.pay({ to: 'c', amount: 3 }), tools.pay({ to: 'a', amount: 1 }), tools.pay({ to: 'b', amount: 2 })]);
       return r.map((x) => x.receipt);`,
      { revisionOf: first.id },
    );
    expect(revised.status).toBe('succeeded');
    // Each result is the one its own call got the first time.
    const receipts = new Map(w.paid.map((p, i) => [(p as { to: string }).to, `r${i + 1}`]));
    expect(output(revised)).toEqual([receipts.get('c'), receipts.get('a'), receipts.get('b')]);
    expect(w.paid).toHaveLength(3);
  });

  it('two identical calls are matched in the order asked, a third runs', async () => {
    const w = world(fx);
    const first = await runCode(
      fx,
      w,
      `await Promise.all([tools.pay({ to: 'a', amount: 1 }), tools.pay({ to: 'a', amount: 1 })]); throw new Error('x');`,
    );
    const revised = await runCode(
      fx,
      w,
      `const r = [];
       for (let i = 0; i < 3; i++) r.push((await tools.pay({ to: 'a', amount: 1 })).receipt);
       return r;`,
      { revisionOf: first.id },
    );
    expect(output(revised)).toEqual(['r1', 'r2', 'r3']);
    expect(w.paid).toHaveLength(3);
  });

  it('an unsafe call with other arguments waits for a human, naming both calls; retry runs it once', async () => {
    const w = world(fx);
    const first = await runCode(fx, w, FAILS_AFTER_THREE);
    const changed = `
      const a = await tools.pay({ to: 'a', amount: 100 });
      const c = await tools.pay({ to: 'b', amount: 250 });
      return [a.receipt, c.receipt];`;
    const revised = await runCode(fx, w, changed, { revisionOf: first.id });
    expect(revised).toMatchObject({
      status: 'paused',
      pauseReason: 'needs_attention',
      error: { code: 'NEEDS_ATTENTION' },
    });
    expect(revised.error?.message).toContain('tools.pay({"to":"b","amount":250})');
    expect(revised.error?.message).toContain('tools.pay({"amount":200,"to":"b"})');
    expect(revised.error?.message).toContain(`call-3 of task ${first.id}`);
    expect(w.paid).toHaveLength(2);
    const journal = await fx.store.readJournal(revised.id);
    const held = journal.find((e) => e.type === 'control' && e.data.action === 'revision_held');
    expect(held?.data).toMatchObject({
      call_id: 'call-2',
      earlier: { origin: { task_id: first.id, call_id: 'call-3' }, tool: 'tools.pay' },
    });
    await decide(fx.store, revised.id, { action: 'retry', reason: 'new amount' });
    const done = await ran(w.runner, revised.id);
    expect(done.status).toBe('succeeded');
    expect(output(done)).toEqual(['r1', 'r3']);
    expect(w.paid).toEqual([
      { to: 'a', amount: 100 },
      { amount: 200, to: 'b' },
      { to: 'b', amount: 250 },
    ]);
  });

  it('a held call skipped by a human gets the given result and never runs', async () => {
    const w = world(fx);
    const first = await runCode(fx, w, FAILS_AFTER_THREE);
    const changed = `return (await tools.pay({ to: 'z', amount: 1 }));`;
    const revised = await runCode(fx, w, changed, { revisionOf: first.id });
    expect(revised.pauseReason).toBe('needs_attention');
    await decide(fx.store, revised.id, {
      action: 'skip',
      result: { receipt: 'none' },
      reason: 'already paid',
    });
    const done = await ran(w.runner, revised.id);
    expect(output(done)).toEqual({ receipt: 'none' });
    expect(w.paid).toHaveLength(2);
  });

  it("a tool declared `revisedCall: 'run'` runs a call with other arguments at once", async () => {
    const w = world(fx);
    const first = await runCode(fx, w, `await tools.refund({ id: 1 }); throw new Error('x');`);
    const revised = await runCode(fx, w, `return await tools.refund({ id: 2 });`, { revisionOf: first.id });
    expect(revised.status).toBe('succeeded');
    expect(w.paid).toEqual([{ refund: { id: 1 } }, { refund: { id: 2 } }]);
  });

  it('rerunReads: read calls run again, unsafe ones are still taken over', async () => {
    const w = world(fx);
    const first = await runCode(fx, w, FAILS_AFTER_THREE);
    const fixed = `
      await tools.pay({ to: 'a', amount: 100 });
      const b = await tools.balance({ account: 'main' });
      await tools.pay({ amount: 200, to: 'b' });
      return b;`;
    const revised = await runCode(fx, w, fixed, { revisionOf: first.id, rerunReads: true });
    expect(output(revised)).toBe(98);
    expect(w.paid).toHaveLength(2);
    expect(w.reads).toHaveLength(2);
  });

  it('a failed call is not taken over: it runs again', async () => {
    const w = world(fx);
    let fail = true;
    const flaky = new ToolRegistry([
      defineTool({
        name: 'fetchRate',
        description: 'fails the first time',
        effect: 'read',
        execute: () => {
          if (fail) {
            fail = false;
            throw new Error('down');
          }
          return 1.5;
        },
      }),
    ]);
    const runner = new TaskRunner({ store: fx.store, driver: fx.driver, tools: flaky, owner: 'w' });
    const first = await fx.store.createTask({
      kind: 'code',
      code: `return await tools.fetchRate({});`,
      language: 'javascript',
      seed: 1,
    });
    expect((await ran(runner, first.id)).status).toBe('failed');
    const revised = await fx.store.createTask({
      kind: 'code',
      code: `return await tools.fetchRate({});`,
      language: 'javascript',
      seed: 1,
      revisionOf: first.id,
    });
    expect(output(await ran(runner, revised.id))).toBe(1.5);
    expect(w.paid).toHaveLength(0);
  });

  it('a revision that crashed part way resumes with the same matching', async () => {
    const w = world(fx);
    const first = await runCode(fx, w, FAILS_AFTER_THREE);
    const fixed = `
      const r = await Promise.all([tools.pay({ to: 'b', amount: 200 }), tools.pay({ to: 'a', amount: 100 })]);
      const d = await tools.pay({ to: 'd', amount: 7 });
      return [...r.map((x) => x.receipt), d.receipt];`;
    // A whole run of the revision, to take the first part of its journal from.
    const whole = await runCode(fx, w, fixed, { revisionOf: first.id });
    expect(output(whole)).toEqual(['r2', 'r1', 'r3']);
    const journal = await fx.store.readJournal(whole.id);
    // The crash came while the group was being taken over: both calls journaled as taken over, the value of the
    // first only (outcomes are journaled in delivery order; the second's is left out).
    const [one, two] = carried(journal).map((e) => (e.type === 'tool_intent' ? e.data.call_id : ''));
    const at = (type: string, id: string | undefined) =>
      journal.findIndex((e) => e.type === type && 'call_id' in e.data && e.data.call_id === id);
    const cut = Math.max(at('tool_intent', two), at('tool_outcome', one));
    const crashed = await fx.store.createTask({
      kind: 'code',
      code: fixed,
      language: 'javascript',
      seed: 1,
      revisionOf: first.id,
    });
    const written = journal
      .slice(1, cut + 1)
      .filter((e) => !(e.type === 'tool_outcome' && e.data.call_id === two))
      .map(({ type, data }) => ({ type, data }) as JournalEntry);
    // The group's two calls were both taken over, one value journaled: the other never ran, it is taken again.
    expect(carried(written)).toHaveLength(2);
    expect(written.filter((e) => e.type === 'tool_outcome')).toHaveLength(1);
    await journalAsDeadWorker(fx.store, crashed.id, written);
    const paidBefore = w.paid.length;
    const resumed = await ran(w.runner, crashed.id);
    expect(resumed).toMatchObject({ status: 'succeeded', error: null });
    expect(output(resumed)).toEqual(['r2', 'r1', `r${paidBefore + 1}`]);
    // Only `d` ran again (a new task: its idempotency key is its own); the two payments were taken over.
    expect(w.paid.slice(paidBefore)).toEqual([{ to: 'd', amount: 7 }]);
    const resumedJournal = await fx.store.readJournal(crashed.id);
    expect(carried(resumedJournal)).toHaveLength(2);
  });

  it('an answered input wait is taken over; another question is asked, never held for a human', async () => {
    const w = world(fx);
    const first = await runCode(fx, w, `const n = await input.wait('amount'); return nope + n;`);
    expect(first.pauseReason).toBe('awaiting_input');
    const answer = provideInput(first, await fx.store.readJournal(first.id), 'amount', 7, 'alice');
    await fx.store.updateTask(first.id, answer.patch, {
      expectedVersion: first.version,
      append: answer.append,
    });
    expect((await ran(w.runner, first.id)).status).toBe('failed');
    const revised = await runCode(
      fx,
      w,
      `const m = await input.wait('memo'); const n = await input.wait('amount'); return [n, m];`,
      { revisionOf: first.id },
    );
    // `memo` is new (asked while the earlier `amount` is not taken yet): the revision waits for it, as any task
    // would; `amount` was answered in the earlier task and is taken over.
    expect(revised).toMatchObject({ status: 'paused', pauseReason: 'awaiting_input' });
    const memo = provideInput(revised, await fx.store.readJournal(revised.id), 'memo', 'ok', 'alice');
    await fx.store.updateTask(revised.id, memo.patch, {
      expectedVersion: revised.version,
      append: memo.append,
    });
    expect(output(await ran(w.runner, revised.id))).toEqual([7, 'ok']);
  });

  it('a revision of a task that is gone fails with NOT_FOUND', async () => {
    const w = world(fx);
    const t = await runCode(fx, w, `return 1`, { revisionOf: 'no-such-task' });
    expect(t).toMatchObject({ status: 'failed', error: { code: 'NOT_FOUND' } });
  });
});

const probe = await probePython();

describe.skipIf(!probe.ok)(
  `a revised Python task takes over what its earlier task completed${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    const fx = useDurableFixture('revision-carry-py');
    let python: PythonDriver;
    beforeAll(() => {
      python = createPythonDriver({ warm: 1 });
    });
    afterAll(async () => {
      await python.close();
    });

    it('fails after three calls, fixed: the three are not run again; a gathered group in another order too', async () => {
      const w = world(fx);
      const runner = new TaskRunner({ store: fx.store, driver: python, tools: w.tools, owner: 'py' });
      const py = (code: string, extra: Partial<CodeTaskInput> = {}) =>
        fx.store.createTask({ kind: 'code', code, language: 'python', seed: 1, ...extra });
      const first = await py(
        [
          'import asyncio',
          'a = tools.pay(to="a", amount=100)',
          'b = tools.balance(account="main")',
          'g = await asyncio.gather(tools.pay_async(to="x", amount=1), tools.pay_async(to="y", amount=2))',
          'totl + 1',
        ].join('\n'),
      );
      expect(await ran(runner, first.id)).toMatchObject({ status: 'failed', error: { code: 'GUEST_ERROR' } });
      expect(w.paid).toHaveLength(3);
      const revised = await py(
        [
          'import asyncio',
          'a = tools.pay(amount=100, to="a")',
          'b = tools.balance(account="main")',
          'g = await asyncio.gather(tools.pay_async(to="y", amount=2), tools.pay_async(to="x", amount=1))',
          'd = tools.pay(to="d", amount=4)',
          '[a["receipt"], b, [x["receipt"] for x in g], d["receipt"]]',
        ].join('\n'),
        { revisionOf: first.id },
      );
      const done = await ran(runner, revised.id);
      expect(done.status).toBe('succeeded');
      const receipts = new Map(w.paid.map((p, i) => [(p as { to: string }).to, `r${i + 1}`]));
      expect(output(done)).toEqual(['r1', 99, [receipts.get('y'), receipts.get('x')], 'r4']);
      expect(w.paid).toHaveLength(4);
      expect(w.reads).toHaveLength(1);
      expect(carried(await fx.store.readJournal(revised.id))).toHaveLength(4);
    });
  },
);
