import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskRunner } from '../../src/durable/index.ts';
import { provideInput, resolveAttention } from '../../src/durable/paused-actions.ts';
import { decodeValue } from '../../src/codec/index.ts';
import { defineTool, ToolRegistry } from '../../src/internal.ts';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import type { AttentionDecision } from '../../src/api/index.ts';
import type {
  CodeTaskInput,
  JournalEntry,
  JournalEntryInput,
  TaskRecord,
  TaskStore,
} from '../../src/internal.ts';
import { CodecallError } from '../../src/errors/index.ts';
import { setTimeout as sleep } from 'node:timers/promises';
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

/** A store whose `appendJournal` calls are counted (and seen: `onAppend` may throw to stand for a failure). */
function watched(
  store: TaskStore,
  onAppend: (entries: readonly JournalEntryInput[]) => void = () => undefined,
): { store: TaskStore; appends: (readonly JournalEntryInput[])[] } {
  const appends: (readonly JournalEntryInput[])[] = [];
  const wrapped = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'appendJournal') {
        return (...args: Parameters<TaskStore['appendJournal']>) => {
          appends.push(args[1]);
          onAppend(args[1]);
          return target.appendJournal(...args);
        };
      }
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: wrapped, appends };
}

/** A store that dies (refuses everything, as a killed process writes nothing) once `dies` says so of an append. */
function dying(store: TaskStore, dies: (entries: readonly JournalEntryInput[]) => boolean): TaskStore {
  let dead = false;
  const refuse = () => Promise.reject(new CodecallError('STORE_CLOSED', 'the worker died (injected)'));
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (!dead && prop === 'appendJournal' && dies(args[1] as readonly JournalEntryInput[])) dead = true;
        return dead ? refuse() : (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

const isCarried = (e: JournalEntryInput): boolean =>
  e.type === 'tool_intent' && e.data.carried_from !== undefined;

/** `n` carried calls, each with its intent, then its outcome, all before index `end` of `journal`. */
function carriedBefore(journal: readonly JournalEntry[], n: number, end = journal.length): void {
  const ids = carried(journal).map((e) => (e.type === 'tool_intent' ? e.data.call_id : ''));
  expect(ids).toHaveLength(n);
  for (const id of ids) {
    const intent = journal.findIndex((e) => e.type === 'tool_intent' && e.data.call_id === id);
    const outcome = journal.findIndex((e) => e.type === 'tool_outcome' && e.data.call_id === id);
    expect(intent).toBeGreaterThanOrEqual(0);
    expect(outcome).toBeGreaterThan(intent);
    expect(outcome).toBeLessThan(end);
  }
}

/** A program that pays `n` times in a row, then fails on a typo (`fixed`: returns the receipts). */
const payments = (n: number, fixed: string) => `
  const r = [];
  for (let i = 0; i < ${n}; i++) r.push((await tools.pay({ to: 'p' + i, amount: i })).receipt);
  ${fixed}`;

describe("taken-over calls' entries go with the next commit (ADR 0034)", () => {
  const fx = useDurableFixture('revision-carry-deferred');

  it('a revision that takes over 50 calls in a row makes O(1) appends, journaling all 50 in call order', async () => {
    const w = world(fx);
    const first = await runCode(fx, w, payments(50, 'return totl;'));
    expect(first.status).toBe('failed');
    expect(w.paid).toHaveLength(50);
    const { store, appends } = watched(fx.store);
    const runner = new TaskRunner({ store, driver: fx.driver, tools: w.tools, owner: 'counted' });
    const task = await fx.store.createTask({
      kind: 'code',
      code: payments(50, 'return r;'),
      language: 'javascript',
      seed: 1,
      revisionOf: first.id,
    });
    const revised = await ran(runner, task.id);
    expect(revised.status).toBe('succeeded');
    expect(output(revised)).toEqual(Array.from({ length: 50 }, (_, i) => `r${i + 1}`));
    expect(w.paid).toHaveLength(50);
    // The run's set-up (offers, code block), then the carried calls with the end: not two per call.
    expect(appends.length).toBeLessThanOrEqual(5);
    expect(appends.filter((entries) => entries.some(isCarried))).toHaveLength(1);
    const journal = await fx.store.readJournal(task.id);
    carriedBefore(journal, 50);
    const ids = Array.from({ length: 50 }, (_, i) => `call-${i + 1}`);
    expect(carried(journal).map((e) => e.type === 'tool_intent' && e.data.call_id)).toEqual(ids);
    const outcomes = journal.filter((e) => e.type === 'tool_outcome');
    expect(outcomes.map((e) => e.type === 'tool_outcome' && e.data.call_id)).toEqual(ids);
    expect(outcomes.every((e) => e.type === 'tool_outcome' && typeof e.data.clock === 'number')).toBe(true);
  });

  it('a revision that throws after taking over calls journals them first', async () => {
    const w = world(fx);
    const first = await runCode(fx, w, payments(3, 'return totl;'));
    const revised = await runCode(fx, w, payments(3, "throw new Error('still broken');"), {
      revisionOf: first.id,
    });
    expect(revised).toMatchObject({ status: 'failed', error: { code: 'GUEST_ERROR' } });
    carriedBefore(await fx.store.readJournal(revised.id), 3);
    expect(w.paid).toHaveLength(3);
  });

  it('a revision that pauses for the approval of a new call journals them before the request', async () => {
    const w = world(fx);
    const first = await runCode(fx, w, payments(3, 'return totl;'));
    const sent: unknown[] = [];
    const tools = new ToolRegistry([
      ...w.tools.definitions,
      defineTool({
        name: 'wire',
        description: 'unsafe, needs approval',
        effect: 'unsafe',
        requiresApproval: true,
        execute: (a) => {
          sent.push(a);
          return 'wired';
        },
      }),
    ]);
    const runner = new TaskRunner({ store: fx.store, driver: fx.driver, tools, owner: 'approvals' });
    const task = await fx.store.createTask({
      kind: 'code',
      code: payments(3, "return [...r, await tools.wire({ to: 'x' })];"),
      language: 'javascript',
      seed: 1,
      revisionOf: first.id,
    });
    const paused = await ran(runner, task.id);
    expect(paused).toMatchObject({ status: 'paused', pauseReason: 'approval_required' });
    const journal = await fx.store.readJournal(task.id);
    carriedBefore(
      journal,
      3,
      journal.findIndex((e) => e.type === 'approval_request'),
    );
    const done = await runner.decide(task.id, [{ approvalId: 'call-4', decision: 'approve' }], 'ops');
    expect(done).toMatchObject({ status: 'succeeded' });
    expect(done && output(done)).toEqual(['r1', 'r2', 'r3', 'wired']);
    expect(sent).toHaveLength(1);
    expect(w.paid).toHaveLength(3);
  });

  it.each([
    ['cancel', { status: 'cancelled' }, 'cancel'],
    ['pause', { status: 'paused', pauseReason: 'user_request' }, 'pause'],
    ['shutdown', { status: 'paused', pauseReason: 'shutdown' }, 'pause'],
  ] as const)(
    'a revision interrupted (%s) while it computes journals its taken-over calls before its end',
    async (how, ended, action) => {
      const w = world(fx);
      const first = await runCode(fx, w, payments(3, 'return totl;'));
      const task = await fx.store.createTask({
        kind: 'code',
        code: payments(3, "console.log('taken'); for (;;) {}"),
        language: 'javascript',
        seed: 1,
        revisionOf: first.id,
      });
      let carriedWhenLogged = -1;
      const runner: TaskRunner = new TaskRunner({
        store: fx.store,
        driver: fx.driver,
        tools: w.tools,
        owner: `interrupt-${how}`,
        onLog: () => {
          void fx.store.readJournal(task.id).then((j) => {
            // Nothing durable yet: the values were delivered, their entries wait for the run's end.
            carriedWhenLogged = carried(j).length;
            if (how === 'cancel') runner.cancel(task.id);
            else if (how === 'pause') runner.pause(task.id);
            else runner.shutdown();
          });
        },
      });
      const t = await ran(runner, task.id);
      expect(t).toMatchObject(ended);
      expect(carriedWhenLogged).toBe(0);
      const journal = await fx.store.readJournal(task.id);
      const end = journal.findIndex((e) => e.type === 'control' && e.data.action === action);
      expect(end).toBeGreaterThan(0);
      carriedBefore(journal, 3, end);
      expect(w.paid).toHaveLength(3);
    },
  );

  it('a revision that times out while it computes journals its taken-over calls', async () => {
    const w = world(fx);
    const first = await runCode(fx, w, payments(3, 'return totl;'));
    const revised = await runCode(fx, w, payments(3, 'for (;;) {}'), {
      revisionOf: first.id,
      limits: { timeoutMs: 300 },
    });
    expect(revised).toMatchObject({ status: 'failed', error: { code: 'TIMEOUT' } });
    carriedBefore(await fx.store.readJournal(revised.id), 3);
  });

  it('a worker that dies before the taken-over calls are durable: they are taken over again, none runs twice', async () => {
    const w = world(fx);
    const first = await runCode(fx, w, payments(3, 'return totl;'));
    const code = payments(3, "return [...r, await tools.balance({ account: 'after' })];");
    const task = await fx.store.createTask({
      kind: 'code',
      code,
      language: 'javascript',
      seed: 1,
      revisionOf: first.id,
    });
    // Worker B delivers the three values, then dies at the first append that would hold them (the new call's).
    const b = new TaskRunner({
      store: dying(fx.store, (entries) => entries.some(isCarried)),
      driver: fx.driver,
      tools: w.tools,
      owner: 'B',
      leaseMs: 200,
    });
    await b.runTask(task.id).catch(() => undefined);
    expect(carried(await fx.store.readJournal(task.id))).toHaveLength(0);
    expect(w.reads).toHaveLength(0); // the new call never started: its intent was not journaled
    await sleep(300); // B's lease expires
    const resumed = await ran(w.runner, task.id);
    expect(resumed).toMatchObject({ status: 'succeeded', error: null });
    expect(output(resumed)).toEqual(['r1', 'r2', 'r3', 97]);
    expect(w.paid).toHaveLength(3);
    expect(w.reads).toHaveLength(1);
    carriedBefore(await fx.store.readJournal(task.id), 3);
  });

  it('a failed append of taken-over entries fails the run with its code, nothing dropped silently', async () => {
    const w = world(fx);
    const first = await runCode(fx, w, payments(3, 'return totl;'));
    let failing = true;
    const { store } = watched(fx.store, (entries) => {
      if (failing && entries.some(isCarried)) {
        failing = false;
        throw new CodecallError('STORE_ERROR', 'disk full (injected)');
      }
    });
    const runner = new TaskRunner({
      store,
      driver: fx.driver,
      tools: w.tools,
      owner: 'store-error',
      retryBaseMs: 0,
    });
    const task = await fx.store.createTask(
      {
        kind: 'code',
        code: payments(3, "return [...r, await tools.balance({ account: 'after' })];"),
        language: 'javascript',
        seed: 1,
        revisionOf: first.id,
      },
      { attributes: { maxRetries: 1 } },
    );
    const t = await ran(runner, task.id);
    // A store error is retried: the task goes back to the queue and its journal holds none of the lost entries.
    expect(t).toMatchObject({ status: 'pending', error: { code: 'STORE_ERROR' } });
    expect(carried(await fx.store.readJournal(task.id))).toHaveLength(0);
    expect(w.reads).toHaveLength(0);
    const done = await ran(runner, task.id);
    expect(output(done)).toEqual(['r1', 'r2', 'r3', 97]);
    expect(w.paid).toHaveLength(3);
    carriedBefore(await fx.store.readJournal(task.id), 3);
  });

  describe('the journal bound', () => {
    const blob = (ran: unknown[]) =>
      defineTool({
        name: 'blob',
        description: 'returns ~10 KB',
        effect: 'read',
        execute: (a) => {
          ran.push(a);
          return 'b'.repeat(10_000);
        },
      });
    const blobs = (fixed: string) => `
      for (let i = 0; i < 10; i++) await tools.blob({ i });
      ${fixed}`;

    // The offers (~100 KB) fit, the taken-over values journaled again (~100 KB more) do not.
    it.each([
      ['by the run end', 'return 1;'],
      ['by a live call', "return await tools.pay({ to: 'z', amount: 1 });"],
    ])('fails JOURNAL_LIMIT cleanly when taken-over entries reach it (%s)', async (_, fixed) => {
      const w = world(fx);
      const ranBlobs: unknown[] = [];
      const tools = new ToolRegistry([...w.tools.definitions, blob(ranBlobs)]);
      const runner = new TaskRunner({
        store: fx.store,
        driver: fx.driver,
        tools,
        owner: 'bounded',
        journalLimits: { maxBytes: 150_000 },
      });
      const make = (code: string, extra: Partial<CodeTaskInput> = {}) =>
        fx.store.createTask({ kind: 'code', code, language: 'javascript', seed: 1, ...extra });
      const first = await ran(runner, (await make(blobs('return totl;'))).id);
      expect(first).toMatchObject({ status: 'failed', error: { code: 'GUEST_ERROR' } });
      expect(ranBlobs).toHaveLength(10);
      const revised = await ran(runner, (await make(blobs(fixed), { revisionOf: first.id })).id);
      expect(revised).toMatchObject({ status: 'failed', error: { code: 'JOURNAL_LIMIT' } });
      const journal = await fx.store.readJournal(revised.id);
      expect(journal.filter((e) => e.type === 'carry_offer')).toHaveLength(10);
      // Nothing half-written: the refused append held every taken-over entry.
      expect(carried(journal)).toHaveLength(0);
      expect(journal.some((e) => e.type === 'tool_outcome')).toBe(false);
      expect(ranBlobs).toHaveLength(10);
      expect(w.paid).toHaveLength(0);
    });
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
