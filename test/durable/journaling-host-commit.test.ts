import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import { callIdOf } from '../../src/spec/index.ts';
import type { HostCall, JournalEntryInput, Lease, TaskStore } from '../../src/spec/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { defineTool, ToolRegistry } from '../../src/tools/index.ts';
import { CommitQueue } from '../../src/durable/commit-queue.ts';
import { JournalingHost } from '../../src/durable/journaling-host.ts';

// How JournalingHost commits: one task's concurrent calls share appends, in the order they were committed.

const work = defineTool({
  name: 'work',
  description: 'answers after `ms` milliseconds',
  input: { type: 'object', properties: { i: { type: 'number' }, ms: { type: 'number' } } },
  // Not `read`: a read's intent goes with its outcome (ADR 0047, amended 2026-12-07); these test intents first.
  effect: 'idempotent',
  async execute(args) {
    const { i, ms } = args as { i: number; ms: number };
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { i };
  },
});
const registry = new ToolRegistry([work]);

const call = (i: number, ms: number): HostCall => ({
  kind: 'tool',
  callId: `c${i}`,
  namespace: 'tools',
  name: 'work',
  args: { i, ms },
});

describe('JournalingHost commits', () => {
  let dir = '';
  let store: TaskStore;
  let lease: Lease;
  let appends: number[];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-host-commit-'));
    store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
    await store.createTask({ kind: 'code', code: 'return 1', language: 'javascript', seed: 1 });
    const claimed = await store.claimTask('w', { leaseMs: 60_000 });
    if (!claimed) throw new Error('no lease');
    lease = claimed;
    appends = [];
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  function host(append?: (entries: readonly JournalEntryInput[]) => Promise<void>): JournalingHost {
    return new JournalingHost({
      live: registry.host(),
      recorded: [],
      append:
        append ??
        (async (entries) => {
          appends.push(entries.length);
          await store.appendJournal(lease.taskId, entries, { fencingToken: lease.fencingToken });
        }),
      effectOf: () => 'idempotent',
      clock: () => 1_700_000_000_000,
      onFatal: (error) => {
        throw error;
      },
    });
  }

  it('coalesces overlapping commits into fewer appends, journaling in delivery order', async () => {
    const h = host();
    const signal = new AbortController().signal;
    const delivered: string[] = [];
    // As a driver does for one Promise.all of 100 calls: all issued at once; they finish in a shuffled order,
    // many in the same timer tick.
    const calls = Array.from({ length: 100 }, (_, i) => {
      const c = call(i, (i * 37) % 11);
      return h.call(c, signal).then((outcome) => {
        delivered.push(c.callId);
        return outcome;
      });
    });
    const outcomes = await Promise.all(calls);
    for (const outcome of outcomes) expect(outcome).toMatchObject({ ok: true });

    const journal = (await store.readJournal(lease.taskId)).slice(1);
    expect(journal).toHaveLength(200);
    // Intents in call order (all 100 went together in the first append), outcomes in delivery order.
    const intents = journal.filter((e) => e.type === 'tool_intent').map((e) => e.data.call_id);
    const outcomeOrder = journal.filter((e) => e.type === 'tool_outcome').map((e) => e.data.call_id);
    expect(intents).toEqual(calls.map((_, i) => `c${i}`));
    expect(outcomeOrder).toEqual(delivered);
    expect(new Set(delivered).size).toBe(100);
    expect(delivered).not.toEqual(intents); // the shuffle really reordered them
    expect(appends[0]).toBe(100);
    expect(appends.reduce((a, b) => a + b, 0)).toBe(200);
    expect(appends.length).toBeLessThan(200 / 4);
  });

  it('rejects exactly the callers whose append failed; later commits go on', async () => {
    let failNext = 0;
    const batches: string[][] = [];
    const h = host(async (entries) => {
      batches.push(entries.map((e) => String(callIdOf(e))));
      if (failNext > 0) {
        failNext -= 1;
        throw new CodecallError('STORE_ERROR', 'disk full');
      }
      await store.appendJournal(lease.taskId, entries, { fencingToken: lease.fencingToken });
    });
    const signal = new AbortController().signal;
    failNext = 1; // the first append (both intents) fails
    const failed = await Promise.allSettled([h.call(call(1, 0), signal), h.call(call(2, 0), signal)]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((failed[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'STORE_ERROR' });
    expect(batches).toEqual([['c1', 'c2']]);
    expect(await h.call(call(3, 0), signal)).toMatchObject({ ok: true });
    const journal = (await store.readJournal(lease.taskId)).slice(1);
    expect(journal.map((e) => [e.type, callIdOf(e)])).toEqual([
      ['tool_intent', 'c3'],
      ['tool_outcome', 'c3'],
    ]);
  });
});

describe('CommitQueue: deferred entries (taken-over calls, ADR 0034)', () => {
  const entry = (id: string): JournalEntryInput => ({
    type: 'control',
    data: { action: 'not_started', call_id: id },
  });
  const ids = (entries: readonly JournalEntryInput[]) => entries.map((e) => String(callIdOf(e)));

  /** An append that waits until the test lets it finish (`release`), or fails with `fail`. */
  function gated() {
    const batches: string[][] = [];
    const pending: { resolve: () => void; reject: (e: Error) => void }[] = [];
    const append = (entries: readonly JournalEntryInput[]) =>
      new Promise<void>((resolve, reject) => {
        batches.push(ids(entries));
        pending.push({ resolve, reject });
      });
    const next = () => {
      const p = pending.shift();
      if (!p) throw new Error('no append in flight');
      return p;
    };
    return { append, batches, release: () => next().resolve(), fail: (e: Error) => next().reject(e) };
  }
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it('start no append, settle in a later task, and go first, in order, in the next commit', async () => {
    const g = gated();
    const q = new CommitQueue(g.append);
    const settled: string[] = [];
    const d1 = q.defer([entry('d1')]).then(() => settled.push('d1'));
    const d2 = q.defer([entry('d2')]).then(() => settled.push('d2'));
    expect(settled).toEqual([]); // never inside the call
    await Promise.all([d1, d2]);
    expect(settled).toEqual(['d1', 'd2']);
    expect(g.batches).toEqual([]);
    const c = q.commit([entry('c')]);
    await tick();
    expect(g.batches).toEqual([['d1', 'd2', 'c']]);
    g.release();
    await c;
  });

  it('settle only after the commits queued before them (deliveries keep journal order)', async () => {
    const g = gated();
    const q = new CommitQueue(g.append);
    const settled: string[] = [];
    const c1 = q.commit([entry('c1')]).then(() => settled.push('c1'));
    await tick(); // c1's append is in flight
    const d = q.defer([entry('d')]).then(() => settled.push('d'));
    const c2 = q.commit([entry('c2')]).then(() => settled.push('c2'));
    await tick();
    await tick();
    expect(settled).toEqual([]);
    g.release(); // c1
    await c1;
    await tick();
    expect(g.batches).toEqual([['c1'], ['d', 'c2']]);
    g.release(); // d, c2
    await Promise.all([d, c2]);
    expect(settled).toEqual(['c1', 'd', 'c2']);
  });

  it('flush() writes what waits and resolves at once when nothing does', async () => {
    const g = gated();
    const q = new CommitQueue(g.append);
    await q.flush();
    expect(g.batches).toEqual([]);
    await q.defer([entry('d')]);
    const flushed = q.flush();
    await tick();
    expect(g.batches).toEqual([['d']]);
    g.release();
    await flushed;
  });

  it('a failed append that held deferred entries is reported once; every later write is refused', async () => {
    const g = gated();
    const lost: Error[] = [];
    const q = new CommitQueue(g.append, (e) => lost.push(e));
    await q.defer([entry('d')]);
    const c = q.commit([entry('c')]);
    await tick();
    g.fail(new CodecallError('FENCED', 'lease lost'));
    await expect(c).rejects.toMatchObject({ code: 'FENCED' });
    expect(lost.map((e) => (e as CodecallError).code)).toEqual(['FENCED']);
    await expect(q.commit([entry('later')])).rejects.toMatchObject({ code: 'FENCED' });
    await expect(q.defer([entry('later')])).rejects.toMatchObject({ code: 'FENCED' });
    await expect(q.flush()).rejects.toMatchObject({ code: 'FENCED' });
    expect(g.batches).toEqual([['d', 'c']]);
  });

  it('a failed flush rejects it, and a deferred caller not yet settled', async () => {
    const g = gated();
    const lost: Error[] = [];
    const q = new CommitQueue(g.append, (e) => lost.push(e));
    const d = q.defer([entry('d')]);
    const flushed = q.flush(); // takes d with it, before d's own later task
    await Promise.resolve();
    await Promise.resolve();
    g.fail(new CodecallError('JOURNAL_LIMIT', 'over the bound'));
    await expect(flushed).rejects.toMatchObject({ code: 'JOURNAL_LIMIT' });
    await expect(d).rejects.toMatchObject({ code: 'JOURNAL_LIMIT' });
    expect(lost).toHaveLength(1);
  });
});
