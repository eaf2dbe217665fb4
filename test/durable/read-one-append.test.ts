import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeValue } from '../../src/codec/index.ts';
import { createRuntime } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import { callIdOf } from '../../src/spec/index.ts';
import type { JournalEntry, JournalEntryInput, TaskStore } from '../../src/spec/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { startCrashWorker } from './crash-fixture.ts';
import { useDurableFixture } from './fixture.ts';

// A `read` call journals its intent with its outcome, in one append (ADR 0047, amended 2026-12-07): a read cut off
// before its outcome is made again, which is what `read` means; every other effect keeps the intent committed
// before the tool runs. These tests hold the contract: the journal's shape, one append per read, an exact replay,
// and a crash mid-read that runs the read again (and only it).

const PROGRAM = `
const a = await tools.look({ i: 0 });
const b = await tools.look({ i: 1 });
const w = await tools.write({ i: 9 });
const [c, d] = await Promise.all([tools.look({ i: 2 }), tools.look({ i: 3 })]);
return { sum: a.twice + b.twice + c.twice + d.twice, wrote: w.wrote, roll: Math.floor(Math.random() * 1e6) };
`;

const calls = (journal: readonly JournalEntry[]) =>
  journal
    .filter((e) => e.type === 'tool_intent' || e.type === 'tool_outcome')
    .map((e) => `${e.type === 'tool_intent' ? 'intent' : 'outcome'} ${e.data.call_id}`);

describe('a read call: one journal append, intent with its outcome', () => {
  const fx = useDurableFixture('read-one-append');

  it('journals a read as intent+outcome in one append, an unsafe call as two; a replay after a pause is exact', async () => {
    const ran: string[] = [];
    const look = defineTool({
      name: 'look',
      description: 'reads',
      input: { type: 'object', properties: { i: { type: 'number' } }, required: ['i'] },
      effect: 'read',
      execute: async (args) => {
        const { i } = args as { i: number };
        ran.push(`look ${String(i)}`);
        await sleep(5);
        return { i, twice: i * 2 };
      },
    });
    const write = defineTool({
      name: 'write',
      description: 'writes, after an approval',
      input: { type: 'object', properties: { i: { type: 'number' } }, required: ['i'] },
      effect: 'unsafe',
      requiresApproval: true,
      execute: (args) => {
        ran.push('write');
        return { wrote: (args as { i: number }).i };
      },
    });
    // The real store; its appends counted as they are made.
    const appends: string[][] = [];
    const store: TaskStore = new Proxy(fx.store, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key);
        if (key === 'appendJournal' && typeof value === 'function') {
          return (...args: unknown[]) => {
            const entries = args[1] as readonly JournalEntryInput[];
            appends.push(entries.map((e) => `${e.type} ${callIdOf(e) ?? ''}`));
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const runtime = createRuntime({
      store,
      drivers: [fx.driver],
      tools: new ToolRegistry([look, write]),
      pollMs: 5,
      pausedVmBudgetBytes: 0, // a resume replays the journal (ADR 0010), not a kept VM
    });
    try {
      runtime.start();
      const task = await runtime.submit({ code: PROGRAM });
      const paused = await runtime.wait(task.task_id);
      expect(paused).toMatchObject({ status: 'paused', pause_reason: 'approval_required' });
      const before = await fx.store.readJournal(task.task_id);
      expect(calls(before)).toEqual([
        'intent call-1',
        'outcome call-1',
        'intent call-2',
        'outcome call-2',
        'intent call-3',
      ]);
      // Each read's intent and outcome went in one append; the read's intent says when its tool started.
      const tool = appends.filter((a) => a.some((e) => e.startsWith('tool_')));
      expect(tool.slice(0, 3)).toEqual([
        ['tool_intent call-1', 'tool_outcome call-1'],
        ['tool_intent call-2', 'tool_outcome call-2'],
        ['tool_intent call-3'],
      ]);
      const intent1 = before.find((e) => e.type === 'tool_intent' && e.data.call_id === 'call-1');
      expect(intent1?.data).toMatchObject({ tool: 'tools.look', started_at: expect.any(Number) as number });
      const intent3 = before.find((e) => e.type === 'tool_intent' && e.data.call_id === 'call-3');
      expect(intent3?.data).not.toHaveProperty('started_at');

      const approval = paused.pending_approvals[0]?.id ?? '';
      await runtime.decide(task.task_id, [{ approvalId: approval, decision: 'approve' }]);
      const done = await runtime.wait(task.task_id, { until: 'terminal' });
      expect(done).toMatchObject({ status: 'succeeded', result: { output: { sum: 12, wrote: 9 } } });
      // The replay ran no completed call again.
      expect(ran.filter((r) => r === 'look 0')).toHaveLength(1);
      expect(ran.filter((r) => r === 'look 1')).toHaveLength(1);
      expect(ran.filter((r) => r === 'write')).toHaveLength(1);
      const journal = await fx.store.readJournal(task.task_id);
      const ids = calls(journal);
      // Promise.all's reads: each intent right before its own outcome, in the order they settled.
      for (const id of ['call-4', 'call-5']) {
        expect(ids.indexOf(`outcome ${id}`) - ids.indexOf(`intent ${id}`)).toBe(1);
      }
    } finally {
      await runtime.close();
    }
  });
});

describe('a long read', () => {
  const fx = useDurableFixture('read-long');

  it('journals its intent while it runs (past READ_INTENT_AFTER_MS), then its outcome alone', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((r) => (release = r));
    let started = false;
    const slow = defineTool({
      name: 'slow',
      description: 'a long read',
      input: { type: 'object' },
      effect: 'read',
      execute: async () => {
        started = true;
        await held;
        return { done: true };
      },
    });
    const runtime = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([slow]),
      pollMs: 5,
    });
    try {
      runtime.start();
      const task = await runtime.submit({ code: 'return await tools.slow({})' });
      for (let i = 0; i < 200 && !started; i++) await sleep(10);
      let journal = await fx.store.readJournal(task.task_id);
      for (let i = 0; i < 200 && !calls(journal).includes('intent call-1'); i++) {
        await sleep(20);
        journal = await fx.store.readJournal(task.task_id);
      }
      // Still running, and its intent (with its start) is in the journal for the stream, the console and a crash.
      expect(calls(journal)).toEqual(['intent call-1']);
      const intent = journal.find((e) => e.type === 'tool_intent');
      expect(intent?.data).toMatchObject({ tool: 'tools.slow', started_at: expect.any(Number) as number });
      release();
      const done = await runtime.wait(task.task_id, { until: 'terminal' });
      expect(done).toMatchObject({ status: 'succeeded', result: { output: { done: true } } });
      expect(calls(await fx.store.readJournal(task.task_id))).toEqual(['intent call-1', 'outcome call-1']);
    } finally {
      release();
      await runtime.close();
    }
  });
});

describe('a crash in the middle of a read', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-read-crash-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('leaves the intent of the read in flight (journaled once it ran long); the next worker runs it again, and only it, and ends as an uninterrupted run', async () => {
    const db = join(dir, 'tasks.db');
    const effects = join(dir, 'effects.log');
    const hold = join(dir, 'hold');
    await writeFile(effects, '');
    await writeFile(hold, '');
    const program = `
const a = await tools.look({ i: 0 });
const w = await tools.write({ i: 9 });
const b = await tools.look({ i: 1 });
const c = await tools.look({ i: 2 });
return { sum: a.twice + b.twice + c.twice, wrote: w.wrote, roll: Math.floor(Math.random() * 1e6) };
`;
    const store = await createSqliteTaskStore({ path: db });
    const task = await store.createTask({ kind: 'code', code: program, language: 'javascript', seed: 5 });
    await store.close();

    const first = startCrashWorker('crash-worker-read.ts', [db, effects, 'worker-1', hold]);
    for (let i = 0; i < 600 && !(await readFile(effects, 'utf8')).includes('look 2 start'); i++)
      await sleep(50);
    expect(await readFile(effects, 'utf8')).toContain('look 2 start');
    // The read is held: past READ_INTENT_AFTER_MS its intent is journaled alone, with its start.
    const mid = await createSqliteTaskStore({ path: db });
    try {
      let journal = await mid.readJournal(task.id);
      for (let i = 0; i < 200 && !calls(journal).includes('intent call-4'); i++) {
        await sleep(50);
        journal = await mid.readJournal(task.id);
      }
      first.child.kill('SIGKILL');
      await first.exited;
      journal = await mid.readJournal(task.id);
      // The read in flight (call-4) left its intent, no outcome; the calls before are whole.
      expect(calls(journal)).toEqual([
        'intent call-1',
        'outcome call-1',
        'intent call-2',
        'outcome call-2',
        'intent call-3',
        'outcome call-3',
        'intent call-4',
      ]);
      const intent = journal.find((e) => e.type === 'tool_intent' && e.data.call_id === 'call-4');
      expect(intent?.data).toMatchObject({ tool: 'tools.look', started_at: expect.any(Number) as number });
    } finally {
      await mid.close();
    }

    await rm(hold);
    expect(existsSync(hold)).toBe(false);
    // An uninterrupted run of the same task (same seed) beside it, to compare with.
    const side = await createSqliteTaskStore({ path: db });
    const fresh = await side.createTask({ kind: 'code', code: program, language: 'javascript', seed: 5 });
    await side.close();
    const second = startCrashWorker('crash-worker-read.ts', [db, effects, 'worker-2']);
    expect(await second.exited).toBe(0);

    const after = await createSqliteTaskStore({ path: db });
    try {
      const done = await after.getTask(task.id);
      expect(done).toMatchObject({ status: 'succeeded' });
      const output = decodeValue(done?.result ?? 'null');
      expect(output).toMatchObject({ sum: 6, wrote: 9 });
      // The same as the uninterrupted run's, its seeded Math.random included.
      expect(output).toEqual(decodeValue((await after.getTask(fresh.id))?.result ?? 'null'));
      // Each count is one for the uninterrupted task, the rest this one's.
      const log = (await readFile(effects, 'utf8')).trim().split('\n');
      expect(log.filter((l) => l === 'look 0 start')).toHaveLength(1 + 1);
      expect(log.filter((l) => l === 'write 9')).toHaveLength(1 + 1); // the unsafe call is never made again
      expect(log.filter((l) => l === 'look 1 start')).toHaveLength(1 + 1);
      expect(log.filter((l) => l === 'look 2 start')).toHaveLength(1 + 2); // the read in flight, made again
      expect(log.filter((l) => l === 'look 2 done')).toHaveLength(1 + 1);
      const journal = await after.readJournal(task.id);
      expect(
        calls(journal)
          .filter((c) => c.endsWith('call-4'))
          .at(-1),
      ).toBe('outcome call-4');
      expect(calls(journal).filter((c) => c === 'outcome call-4')).toHaveLength(1);
      expect(journal.some((e) => e.type === 'control' && e.data.action === 'needs_attention')).toBe(false);
    } finally {
      await after.close();
    }
  });
});
