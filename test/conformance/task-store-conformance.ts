import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import type { JournalEntry, JournalEntryInput, TaskStore } from '../../src/index.ts';
import { registerAuditCases } from './task-store-conformance-audit.ts';
import { registerBatchCases } from './task-store-conformance-batches.ts';
import { registerChangeCases } from './task-store-conformance-changes.ts';
import { registerQueueCases } from './task-store-conformance-queue.ts';
import { registerRevisionCases } from './task-store-conformance-revisions.ts';
import { registerStatsCases } from './task-store-conformance-stats.ts';
import { registerSummaryCases } from './task-store-conformance-summary.ts';
import { registerTailCases } from './task-store-conformance-tail.ts';
import { registerLeaseCases } from './task-store-conformance-leases.ts';
import { codeInput, expectCode, LEASE, T0 } from './task-store-support.ts';

const clockOf = (e: JournalEntry): number | undefined => (e.type === 'clock' ? e.data.clock : undefined);

export { codeInput } from './task-store-support.ts';

export interface TaskStoreConformanceOptions {
  /** Damages the stored journal entry (taskId, seq) behind the store's back, if the implementation can. */
  readonly corrupt?: (store: TaskStore, taskId: string, seq: number) => Promise<void>;
  /** Garbles the task's row behind the store's back (its input no longer JSON), if the implementation can. */
  readonly garbleRow?: (store: TaskStore, taskId: string) => Promise<void>;
}

/** The behaviour every TaskStore must show; each case gets a fresh, empty store. */
export function describeTaskStoreConformance(
  name: string,
  createStore: () => Promise<TaskStore>,
  options: TaskStoreConformanceOptions = {},
): void {
  describe(`${name} task store conformance`, () => {
    let store: TaskStore;
    beforeEach(async () => {
      store = await createStore();
    });
    afterEach(async () => {
      await store.close();
    });

    async function claimed(now = T0): Promise<{ id: string; token: number }> {
      const task = await store.createTask(codeInput(), { now });
      const lease = await store.claimTask('w1', { leaseMs: LEASE, now });
      expect(lease?.taskId).toBe(task.id);
      return { id: task.id, token: lease?.fencingToken ?? -1 };
    }

    describe('tasks', () => {
      it('creates a pending task with a task_input entry and gets it back', async () => {
        const task = await store.createTask(codeInput('return 2', 42), { now: T0 });
        expect(task).toMatchObject({
          status: 'pending',
          pauseReason: null,
          result: null,
          error: null,
          attempts: 0,
        });
        expect(task.id).toMatch(/^task_/);
        expect(task.input).toEqual(codeInput('return 2', 42));
        expect(task.createdAt).toBe(new Date(T0).toISOString());
        expect(await store.getTask(task.id)).toEqual(task);
        expect(await store.getTask('task_missing')).toBeNull();
        const journal = await store.readJournal(task.id);
        expect(journal.map((e) => [e.seq, e.type])).toEqual([[1, 'task_input']]);
        expect(journal[0]?.data).toMatchObject({ seed: 42 });
      });

      it('creates once per idempotency key and request; another request with the key is refused', async () => {
        const idempotency = { key: 'k-1', requestHash: 'h-1' };
        const first = await store.createTask(codeInput(), { now: T0, idempotency });
        const again = await store.createTask(codeInput(), { now: T0 + 5, idempotency });
        expect(again).toEqual(first);
        expect((await store.listTasks()).tasks).toHaveLength(1);
        const error = await expectCode(
          store.createTask(codeInput('return 2'), { idempotency: { key: 'k-1', requestHash: 'h-2' } }),
          'IDEMPOTENCY_CONFLICT',
        );
        expect(error.details).toMatchObject({ task_id: first.id });
        const other = await store.createTask(codeInput(), {
          idempotency: { key: 'k-2', requestHash: 'h-1' },
        });
        expect(other.id).not.toBe(first.id);
      });

      it('honours a caller-chosen id and refuses a duplicate', async () => {
        const task = await store.createTask(codeInput(), { id: 'task_custom' });
        expect(task.id).toBe('task_custom');
        await expectCode(store.createTask(codeInput(), { id: 'task_custom' }), 'INVALID_ARGUMENT');
      });

      it('lists oldest first, filters by status and pages with a cursor', async () => {
        const ids: string[] = [];
        for (let i = 0; i < 7; i++) ids.push((await store.createTask(codeInput(), { now: T0 + i })).id);
        // Same created_at: ties are broken by id, still without gaps or repeats.
        for (let i = 0; i < 3; i++) ids.push((await store.createTask(codeInput(), { now: T0 + 100 })).id);
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < 10; page++) {
          const result = await store.listTasks({ limit: 3, ...(cursor === undefined ? {} : { cursor }) });
          seen.push(...result.tasks.map((t) => t.id));
          if (result.nextCursor === null) break;
          cursor = result.nextCursor;
        }
        expect(seen.slice(0, 7)).toEqual(ids.slice(0, 7));
        expect(new Set(seen)).toEqual(new Set(ids));
        expect(seen).toHaveLength(10);
        await store.claimTask('w', { leaseMs: LEASE, now: T0 + 200 });
        const running = await store.listTasks({ status: 'running' });
        expect(running.tasks.map((t) => t.id)).toEqual([ids[0]]);
        expect(running.nextCursor).toBeNull();
        expect((await store.listTasks({ status: 'pending' })).tasks).toHaveLength(9);
        await expectCode(store.listTasks({ limit: 1001 }), 'INVALID_ARGUMENT');
        await expectCode(store.listTasks({ cursor: 'nonsense' }), 'INVALID_ARGUMENT');
      });

      it('lists newest first with order: newest, paging backwards without gaps or repeats', async () => {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push((await store.createTask(codeInput(), { now: T0 + i })).id);
        for (let i = 0; i < 3; i++) ids.push((await store.createTask(codeInput(), { now: T0 + 100 })).id);
        const oldest = (await store.listTasks({ limit: 1000 })).tasks.map((t) => t.id);
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < 10; page++) {
          const result = await store.listTasks({
            order: 'newest',
            limit: 3,
            ...(cursor === undefined ? {} : { cursor }),
          });
          seen.push(...result.tasks.map((t) => t.id));
          if (result.nextCursor === null) break;
          cursor = result.nextCursor;
        }
        // Exactly the oldest-first list reversed, ties (same created_at) included.
        expect(seen).toEqual([...oldest].reverse());
        expect(seen.slice(-5)).toEqual(ids.slice(0, 5).reverse());
        const newestPending = await store.listTasks({ status: 'pending', order: 'newest', limit: 1 });
        expect(newestPending.tasks[0]?.id).toBe(seen[0]);
        await expectCode(store.listTasks({ order: 'sideways' as unknown as 'newest' }), 'INVALID_ARGUMENT');
      });
    });

    describe('counts', () => {
      it('counts tasks by status, tenant and batch', async () => {
        expect(await store.countTasks()).toBe(0);
        for (let i = 0; i < 3; i++) await store.createTask(codeInput(), { now: T0 + i });
        await store.createTask(codeInput(), { now: T0 + 5, attributes: { tenant: 'acme' } });
        const { batch } = await store.createBatch([{ input: codeInput() }, { input: codeInput() }], {
          tenant: 'acme',
          now: T0 + 6,
        });
        await store.claimTask('w', { leaseMs: LEASE, now: T0 + 10 });
        expect(await store.countTasks()).toBe(6);
        expect(await store.countTasks({ status: 'pending' })).toBe(5);
        expect(await store.countTasks({ status: 'running' })).toBe(1);
        expect(await store.countTasks({ status: 'paused' })).toBe(0);
        expect(await store.countTasks({ tenant: 'acme' })).toBe(3);
        expect(await store.countTasks({ tenant: 'acme', status: 'pending' })).toBe(3);
        expect(await store.countTasks({ batchId: batch.id })).toBe(2);
        expect(await store.countTasks({ sessionId: 'none' })).toBe(0);
      });
    });

    describe('journal', () => {
      it('appends gap-free seqs and reads them back, also after a seq', async () => {
        const { id, token } = await claimed();
        const first = await store.appendJournal(
          id,
          [
            { type: 'code_block', data: { block: 0, code_hash: 'h', code: 'x' } },
            { type: 'tool_intent', data: { call_id: 'c1', tool: 'a.b', args: '[]' } },
          ],
          { fencingToken: token },
        );
        expect(first.map((e) => e.seq)).toEqual([2, 3]);
        const second = await store.appendJournal(id, [{ type: 'clock', data: { clock: 5 } }], {
          fencingToken: token,
        });
        expect(second.map((e) => e.seq)).toEqual([4]);
        expect(await store.appendJournal(id, [], { fencingToken: token })).toEqual([]);
        const all = await store.readJournal(id);
        expect(all.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
        expect(all.slice(1)).toEqual([...first, ...second]);
        expect((await store.readJournal(id, { afterSeq: 2 })).map((e) => e.seq)).toEqual([3, 4]);
        expect(await store.readJournal(id, { afterSeq: 4 })).toEqual([]);
        expect(await store.readJournal(id, { afterSeq: 99 })).toEqual([]);
      });

      it('chains checksums: each is hex SHA-256 and entries differ', async () => {
        const { id, token } = await claimed();
        await store.appendJournal(
          id,
          [
            { type: 'clock', data: { clock: 1 } },
            { type: 'clock', data: { clock: 1 } },
          ],
          { fencingToken: token },
        );
        const entries = await store.readJournal(id);
        for (const entry of entries) expect(entry.checksum).toMatch(/^[0-9a-f]{64}$/);
        expect(new Set(entries.map((e) => e.checksum)).size).toBe(entries.length);
      });

      it('stores data canonically: key order does not matter', async () => {
        const { id, token } = await claimed();
        // Fields beyond an entry type's own are kept, and hashed, as written.
        const data = { clock: 1, b: 1, a: { d: 2, c: 3 } };
        const [a] = await store.appendJournal(id, [{ type: 'clock', data }], { fencingToken: token });
        const [read] = await store.readJournal(id, { afterSeq: 1 });
        expect(read).toEqual(a);
        expect(read?.data).toEqual({ a: { c: 3, d: 2 }, b: 1, clock: 1 });
        expect(JSON.stringify(read?.data)).toBe('{"a":{"c":3,"d":2},"b":1,"clock":1}');
      });

      it('refuses an entry that is none of the journal types, and writes nothing of its append', async () => {
        const { id, token } = await claimed();
        const bad = [
          { type: 'tool_intent', data: { call_id: 'c1', tool: 'a.b' } },
          { type: 'control', data: { action: 'pasue' } },
          { type: 'no_such_type', data: {} },
        ] as unknown as JournalEntryInput[];
        for (const entry of bad) {
          const error = await expectCode(
            store.appendJournal(id, [{ type: 'clock', data: { clock: 1 } }, entry], { fencingToken: token }),
            'INVALID_ARGUMENT',
          );
          expect(error.message).toMatch(/malformed/);
        }
        expect(await store.readJournal(id)).toHaveLength(1);
      });

      if (options.corrupt === undefined) {
        console.warn(
          `[task-store conformance] ${name}: skipping the corruption case: this store has no corrupt() hook`,
        );
      }
      it.runIf(options.corrupt !== undefined)(
        `reports CHECKPOINT_CORRUPT at the first bad entry${options.corrupt === undefined ? ' [skipped: this store has no corrupt() hook]' : ''}`,
        async () => {
          const { id, token } = await claimed();
          const entries = [1, 2, 3].map((clock) => ({ type: 'clock' as const, data: { clock } }));
          await store.appendJournal(id, entries, { fencingToken: token });
          await options.corrupt?.(store, id, 3);
          const error = await expectCode(store.readJournal(id), 'CHECKPOINT_CORRUPT');
          expect(error.details).toMatchObject({ taskId: id, seq: 3 });
          expect((await store.readJournal(id, { afterSeq: 3 })).map((e) => e.seq)).toEqual([4]);
          expect(
            (await expectCode(store.readJournal(id, { afterSeq: 1 }), 'CHECKPOINT_CORRUPT')).details,
          ).toMatchObject({ seq: 3 });
        },
      );

      if (options.garbleRow === undefined) {
        console.warn(
          `[task-store conformance] ${name}: skipping the garbled row case: this store has no garbleRow() hook`,
        );
      }
      it.runIf(options.garbleRow !== undefined)(
        `flags a task whose row cannot be decoded, fails no list for it, and never leases it${options.garbleRow === undefined ? ' [skipped: this store has no garbleRow() hook]' : ''}`,
        async () => {
          const ids: string[] = [];
          for (let i = 0; i < 3; i++) ids.push((await store.createTask(codeInput(), { now: T0 + i })).id);
          const [first, bad, last] = ids as [string, string, string];
          await options.garbleRow?.(store, bad);
          const error = await expectCode(store.getTask(bad), 'CHECKPOINT_CORRUPT');
          expect(error.details).toMatchObject({
            taskId: bad,
            log: 'task',
            tenant: 'default',
            status: 'pending',
          });
          // It is kept out of the page but counts towards it: the cursor goes on after it.
          const page = await store.listTasks({ limit: 2 });
          expect(page.tasks.map((t) => t.id)).toEqual([first]);
          expect(page.corrupt?.map((c) => [c.taskId, c.tenant, c.status])).toEqual([
            [bad, 'default', 'pending'],
          ]);
          expect(page.corrupt?.[0]?.message).toContain(bad);
          const rest = await store.listTasks({ limit: 2, cursor: page.nextCursor ?? '' });
          expect(rest.tasks.map((t) => t.id)).toEqual([last]);
          // Claims skip it by failing it (the runner could not read it), in order.
          expect((await store.claimTask('w1', { leaseMs: LEASE, now: T0 + 10 }))?.taskId).toBe(first);
          expect((await store.claimTask('w1', { leaseMs: LEASE, now: T0 + 10 }))?.taskId).toBe(last);
          expect(await store.claimTask('w1', { leaseMs: LEASE, now: T0 + 10 })).toBeNull();
          expect((await store.listTasks({ status: 'failed' })).corrupt?.map((c) => c.taskId)).toEqual([bad]);
        },
      );

      it('commits many concurrent appends, across tasks and to one task, chained in call order', async () => {
        const tasks = [await claimed(T0), await claimed(T0 + 1), await claimed(T0 + 2)];
        // All issued at once: several appends per task, some with several entries, interleaved across tasks.
        const calls = Array.from({ length: 30 }, (_, i) => {
          const task = tasks[i % tasks.length] ?? tasks[0];
          const size = (i % 4) + 1;
          const entries = Array.from({ length: size }, (_, j) => ({
            type: 'clock' as const,
            data: { clock: i * 10 + j },
          }));
          return {
            task,
            entries,
            written: store.appendJournal(task?.id ?? '', entries, { fencingToken: task?.token ?? -1 }),
          };
        });
        const results = await Promise.all(calls.map((c) => c.written));
        for (const task of tasks) {
          const mine = calls.flatMap((c, i) => (c.task === task ? [results[i] ?? []] : []));
          const appended = mine.flat();
          // Seqs follow the order of the calls, without gaps, after the task_input entry.
          expect(appended.map((e) => e.seq)).toEqual(appended.map((_, i) => i + 2));
          expect(appended.map((e) => e.data)).toEqual(
            calls.filter((c) => c.task === task).flatMap((c) => c.entries.map((e) => e.data)),
          );
          // The read-back is verified (the checksum chain holds) and equals what each append returned.
          const journal = await store.readJournal(task?.id ?? '');
          expect(journal.slice(1)).toEqual(appended);
        }
      });

      it('fails only the bad appends of a concurrent batch; the good ones commit', async () => {
        const a = await claimed(T0);
        const b = await claimed(T0 + 1);
        const clock = (n: number) => [{ type: 'clock' as const, data: { clock: n } }];
        const results = await Promise.allSettled([
          store.appendJournal(a.id, clock(1), { fencingToken: a.token }),
          store.appendJournal(b.id, clock(2), { fencingToken: b.token + 1 }),
          store.appendJournal('task_nope', clock(3), { fencingToken: 1 }),
          store.appendJournal(
            a.id,
            [
              { type: 'clock', data: { clock: 4 } },
              { type: 'clock', data: [] as unknown as { clock: number } },
            ],
            { fencingToken: a.token },
          ),
          store.appendJournal(a.id, clock(5), { fencingToken: a.token }),
          store.appendJournal(b.id, clock(6), { fencingToken: b.token }),
        ]);
        const codes = results.map((r) =>
          r.status === 'fulfilled' ? 'ok' : (r.reason as CodecallError).code,
        );
        expect(codes).toEqual(['ok', 'FENCED', 'NOT_FOUND', 'INVALID_ARGUMENT', 'ok', 'ok']);
        // The half-valid append wrote nothing; the good ones chain on without a gap.
        expect((await store.readJournal(a.id)).map((e) => [e.seq, clockOf(e)])).toEqual([
          [1, undefined],
          [2, 1],
          [3, 5],
        ]);
        expect((await store.readJournal(b.id)).map((e) => [e.seq, clockOf(e)])).toEqual([
          [1, undefined],
          [2, 6],
        ]);
      });

      it('writes nothing for an append whose signal is aborted', async () => {
        const { id, token } = await claimed();
        const clock = (n: number) => [{ type: 'clock' as const, data: { clock: n } }];
        await expectCode(
          store.appendJournal(id, clock(1), { fencingToken: token, signal: AbortSignal.abort() }),
          'ABORTED',
        );
        // Aborted right after the call: the store may have written already, but then the append resolves.
        const controller = new AbortController();
        const late = store.appendJournal(id, clock(2), { fencingToken: token, signal: controller.signal });
        const kept = store.appendJournal(id, clock(3), { fencingToken: token });
        controller.abort();
        const [lateResult] = await Promise.allSettled([late, kept]);
        const expected = lateResult?.status === 'fulfilled' ? [2, 3] : [3];
        if (lateResult?.status === 'rejected')
          expect((lateResult.reason as CodecallError).code).toBe('ABORTED');
        expect((await store.readJournal(id, { afterSeq: 1 })).map(clockOf)).toEqual(expected);
      });

      it('is NOT_FOUND for an unknown task', async () => {
        await expectCode(store.readJournal('task_nope'), 'NOT_FOUND');
        await expectCode(store.appendJournal('task_nope', [], { fencingToken: 1 }), 'NOT_FOUND');
      });
    });

    describe('fencing and versions', () => {
      it('refuses a stale fencing token on append, update and renew', async () => {
        const { id, token } = await claimed();
        const clock = [{ type: 'clock' as const, data: { clock: 1 } }];
        await expectCode(store.appendJournal(id, clock, { fencingToken: token + 1 }), 'FENCED');
        // The lease expires; another worker recovers the task and gets a newer token.
        const stale = { taskId: id, owner: 'w1', fencingToken: token, expiresAt: T0 + LEASE };
        const fresh = await store.claimTask('w2', { leaseMs: LEASE, now: T0 + LEASE + 1 });
        expect(fresh?.fencingToken).toBeGreaterThan(token);
        await expectCode(store.appendJournal(id, clock, { fencingToken: token }), 'FENCED');
        await expectCode(store.updateTask(id, { status: 'succeeded' }, { fencingToken: token }), 'FENCED');
        await expectCode(store.renewLease(stale, { leaseMs: LEASE }), 'FENCED');
        const appended = await store.appendJournal(id, clock, { fencingToken: fresh?.fencingToken ?? -1 });
        expect(appended[0]?.seq).toBe(2);
      });

      it('guards updates by expectedVersion and bumps the version', async () => {
        const task = await store.createTask(codeInput());
        const updated = await store.updateTask(
          task.id,
          { status: 'cancelled' },
          { expectedVersion: task.version },
        );
        expect(updated.version).toBe(task.version + 1);
        expect(updated.status).toBe('cancelled');
        const error = await expectCode(
          store.updateTask(task.id, { status: 'failed' }, { expectedVersion: task.version }),
          'VERSION_CONFLICT',
        );
        expect(error.details).toMatchObject({ version: task.version + 1 });
      });

      it('refuses illegal transitions, naming the current status', async () => {
        const task = await store.createTask(codeInput());
        let error = await expectCode(
          store.updateTask(task.id, { status: 'succeeded' }, { expectedVersion: task.version }),
          'ILLEGAL_TRANSITION',
        );
        expect(error.details).toMatchObject({ status: 'pending' });
        const { id, token } = await claimed(T0 + 1);
        const done = await store.updateTask(
          id,
          { status: 'succeeded', result: '1' },
          { fencingToken: token },
        );
        expect(done).toMatchObject({ status: 'succeeded', result: '1' });
        error = await expectCode(
          store.updateTask(id, { status: 'running' }, { fencingToken: token }),
          'ILLEGAL_TRANSITION',
        );
        expect(error.details).toMatchObject({ status: 'succeeded' });
      });

      it('applies pause, resume and failure patches', async () => {
        const { id, token } = await claimed();
        const paused = await store.updateTask(
          id,
          { status: 'paused', pauseReason: 'approval_required' },
          { fencingToken: token },
        );
        expect(paused.pauseReason).toBe('approval_required');
        const resumed = await store.updateTask(
          id,
          { status: 'pending' },
          { expectedVersion: paused.version },
        );
        expect(resumed).toMatchObject({ status: 'pending', pauseReason: null });
        const lease = await store.claimTask('w2', { leaseMs: LEASE, now: T0 + 5 });
        const failed = await store.updateTask(
          id,
          { status: 'failed', error: { code: 'GUEST_ERROR', message: 'boom' } },
          { fencingToken: lease?.fencingToken ?? -1 },
        );
        expect(failed).toMatchObject({
          status: 'failed',
          attempts: 2,
          error: { code: 'GUEST_ERROR', message: 'boom' },
        });
        expect(await store.getTask(id)).toEqual(failed);
        await expectCode(store.updateTask('task_nope', {}, { expectedVersion: 1 }), 'NOT_FOUND');
      });
    });

    describe('run records, control requests and wake-ups', () => {
      it("keeps a run's log and resources, and journals with an update in one step", async () => {
        const { id, token } = await claimed();
        const log = [{ level: 'log' as const, message: 'hi' }];
        const resources = { cpuMs: 3, wallMs: 9, memoryBytes: 1024, toolCalls: 2 };
        const done = await store.updateTask(
          id,
          { status: 'succeeded', result: '1', executionLog: log, resources },
          { fencingToken: token, append: [{ type: 'clock', data: { clock: 9 } }] },
        );
        expect(done).toMatchObject({ executionLog: log, resources, requestedAction: null, wakeAt: null });
        expect(await store.getTask(id)).toEqual(done);
        expect((await store.readJournal(id)).at(-1)).toMatchObject({ type: 'clock', data: { clock: 9 } });
      });

      it('writes neither the patch nor the entries when the guard fails', async () => {
        const { id } = await claimed();
        const before = await store.readJournal(id);
        await expectCode(
          store.updateTask(
            id,
            { status: 'failed' },
            { fencingToken: 99, append: [{ type: 'control', data: { action: 'cancel' } }] },
          ),
          'FENCED',
        );
        expect(await store.readJournal(id)).toHaveLength(before.length);
        expect((await store.getTask(id))?.status).toBe('running');
      });

      it('records a pause or cancel request for a running task until it leaves running', async () => {
        const { id, token } = await claimed();
        const pending = await store.createTask(codeInput(), { now: T0 + 1 });
        await expectCode(store.requestControl(pending.id, 'pause'), 'ILLEGAL_TRANSITION');
        expect((await store.requestControl(id, 'pause')).requestedAction).toBe('pause');
        expect((await store.requestControl(id, 'cancel')).requestedAction).toBe('cancel');
        // A cancel is not downgraded by a later pause.
        expect((await store.requestControl(id, 'pause')).requestedAction).toBe('cancel');
        expect(await store.listControlRequests('w1')).toEqual([{ taskId: id, action: 'cancel' }]);
        expect(await store.listControlRequests('someone-else')).toEqual([]);
        const cancelled = await store.updateTask(id, { status: 'cancelled' }, { fencingToken: token });
        expect(cancelled.requestedAction).toBeNull();
        expect(await store.listControlRequests('w1')).toEqual([]);
        await expectCode(store.requestControl('task_nope', 'pause'), 'NOT_FOUND');
      });

      it('turns the pause of a running task with a requested cancel into cancelled', async () => {
        const { id, token } = await claimed();
        await store.requestControl(id, 'cancel');
        const ended = await store.updateTask(
          id,
          { status: 'paused', pauseReason: 'approval_required' },
          { fencingToken: token },
        );
        expect(ended).toMatchObject({ status: 'cancelled', pauseReason: null, error: { code: 'CANCELLED' } });
      });

      it('lists paused tasks due to wake up, and forgets the wake-up when the task leaves paused', async () => {
        const { id, token } = await claimed();
        const paused = await store.updateTask(
          id,
          { status: 'paused', pauseReason: 'awaiting_input', wakeAt: T0 + 100 },
          { fencingToken: token },
        );
        expect(paused.wakeAt).toBe(T0 + 100);
        expect((await store.listTasks({ dueBefore: T0 + 99 })).tasks).toEqual([]);
        expect((await store.listTasks({ dueBefore: T0 + 100 })).tasks.map((t) => t.id)).toEqual([id]);
        const resumed = await store.updateTask(
          id,
          { status: 'pending' },
          { expectedVersion: paused.version },
        );
        expect(resumed.wakeAt).toBeNull();
        expect((await store.listTasks({ dueBefore: T0 + 1000 })).tasks).toEqual([]);
      });
    });

    describe('claims and leases', () => {
      it('claims the oldest pending task first and returns null when there is none', async () => {
        expect(await store.claimTask('w', { leaseMs: LEASE, now: T0 })).toBeNull();
        const newer = await store.createTask(codeInput(), { now: T0 + 10 });
        const older = await store.createTask(codeInput(), { now: T0 });
        const first = await store.claimTask('w', { leaseMs: LEASE, now: T0 + 20 });
        expect(first).toEqual({ taskId: older.id, owner: 'w', fencingToken: 1, expiresAt: T0 + 20 + LEASE });
        expect((await store.claimTask('w', { leaseMs: LEASE, now: T0 + 20 }))?.taskId).toBe(newer.id);
        expect(await store.claimTask('w', { leaseMs: LEASE, now: T0 + 20 })).toBeNull();
        expect(await store.getTask(older.id)).toMatchObject({ status: 'running', attempts: 1 });
      });

      it('claims only the named task with taskId, by the same rules', async () => {
        const older = await store.createTask(codeInput(), { now: T0 });
        const newer = await store.createTask(codeInput(), { now: T0 + 10 });
        const lease = await store.claimTask('w', { leaseMs: LEASE, now: T0 + 20, taskId: newer.id });
        expect(lease).toMatchObject({ taskId: newer.id, fencingToken: 1 });
        expect(await store.claimTask('w', { leaseMs: LEASE, now: T0 + 20, taskId: newer.id })).toBeNull();
        expect(await store.claimTask('w', { leaseMs: LEASE, now: T0 + 20, taskId: 'task_nope' })).toBeNull();
        expect(await store.getTask(older.id)).toMatchObject({ status: 'pending' });
      });

      it('recovers a running task whose lease expired, keeping it running and counting attempts', async () => {
        const { id, token } = await claimed();
        expect(await store.claimTask('w2', { leaseMs: LEASE, now: T0 + LEASE - 1 })).toBeNull();
        const recovered = await store.claimTask('w2', { leaseMs: LEASE, now: T0 + LEASE });
        expect(recovered).toMatchObject({ taskId: id, owner: 'w2', fencingToken: token + 1 });
        expect(await store.getTask(id)).toMatchObject({ status: 'running', attempts: 2 });
      });

      it('renews a lease, postponing expiry', async () => {
        const task = await store.createTask(codeInput(), { now: T0 });
        const lease = await store.claimTask('w1', { leaseMs: LEASE, now: T0 });
        if (lease === null) throw new Error('no lease');
        const renewed = await store.renewLease(lease, { leaseMs: LEASE, now: T0 + LEASE - 1 });
        expect(renewed).toEqual({ ...lease, expiresAt: T0 + 2 * LEASE - 1 });
        expect(await store.claimTask('w2', { leaseMs: LEASE, now: T0 + LEASE + 1 })).toBeNull();
        expect((await store.claimTask('w2', { leaseMs: LEASE, now: T0 + 2 * LEASE }))?.taskId).toBe(task.id);
      });

      it('proves a lease while it is held, and is FENCED once it expired, was taken over or given up', async () => {
        await store.createTask(codeInput(), { now: T0 });
        const lease = await store.claimTask('w1', { leaseMs: LEASE, now: T0 });
        if (lease === null) throw new Error('no lease');
        await store.assertLease(lease, { now: T0 + LEASE - 1 });
        // Expired (the worker stalled), though nobody took it yet: no side effect may start on it.
        await expectCode(store.assertLease(lease, { now: T0 + LEASE }), 'FENCED');
        await expectCode(store.assertLease({ ...lease, owner: 'w2' }, { now: T0 + 1 }), 'FENCED');
        const taken = await store.claimTask('w2', { leaseMs: LEASE, now: T0 + LEASE + 1 });
        if (taken === null) throw new Error('no recovery');
        await expectCode(store.assertLease(lease, { now: T0 + LEASE + 2 }), 'FENCED');
        await store.assertLease(taken, { now: T0 + LEASE + 2 });
        await store.releaseLease(taken);
        await expectCode(store.assertLease(taken, { now: T0 + LEASE + 3 }), 'FENCED');
        await expectCode(store.assertLease({ ...lease, taskId: 'task_nope' }, { now: T0 + 1 }), 'FENCED');
      });

      it('releases a lease: the task stays running and is claimable at once; a stale release is ignored', async () => {
        const task = await store.createTask(codeInput(), { now: T0 });
        const lease = await store.claimTask('w1', { leaseMs: LEASE, now: T0 });
        if (lease === null) throw new Error('no lease');
        await store.releaseLease(lease);
        expect(await store.getTask(task.id)).toMatchObject({ status: 'running' });
        await expectCode(store.renewLease(lease, { leaseMs: LEASE, now: T0 }), 'FENCED');
        const next = await store.claimTask('w2', { leaseMs: LEASE, now: T0 + 1 });
        expect(next).toMatchObject({ taskId: task.id, fencingToken: lease.fencingToken + 1 });
        await store.releaseLease(lease);
        expect(await store.claimTask('w3', { leaseMs: LEASE, now: T0 + 2 })).toBeNull();
      });
    });

    registerBatchCases(() => store);
    registerQueueCases(() => store);
    registerAuditCases(() => store);
    registerLeaseCases(() => store);
    registerChangeCases(() => store);
    registerSummaryCases(() => store, options);
    registerTailCases(() => store, options);
    registerRevisionCases(() => store);
    registerStatsCases(() => store);

    describe('lifecycle', () => {
      it('rejects ABORTED when the signal is already aborted', async () => {
        const task = await store.createTask(codeInput());
        const signal = AbortSignal.abort();
        await expectCode(store.createTask(codeInput(), { signal }), 'ABORTED');
        await expectCode(store.getTask(task.id, { signal }), 'ABORTED');
        await expectCode(store.listTasks({}, { signal }), 'ABORTED');
        await expectCode(store.readJournal(task.id, { signal }), 'ABORTED');
        await expectCode(store.appendJournal(task.id, [], { fencingToken: 0, signal }), 'ABORTED');
        await expectCode(store.claimTask('w', { leaseMs: LEASE, signal }), 'ABORTED');
        await expectCode(store.updateTask(task.id, {}, { expectedVersion: 1, signal }), 'ABORTED');
        await expectCode(store.createBatch([{ input: codeInput() }], { tenant: 't', signal }), 'ABORTED');
        await expectCode(store.getBatch('batch_x', { signal }), 'ABORTED');
        await expectCode(store.readAudit(task.id, { signal }), 'ABORTED');
        expect((await store.listTasks()).tasks).toHaveLength(1);
      });

      it('settles appends still pending at close: none hangs, none resolved is lost', async () => {
        const { id, token } = await claimed();
        const pending = [1, 2, 3].map((clock) =>
          store.appendJournal(id, [{ type: 'clock', data: { clock } }], { fencingToken: token }),
        );
        await store.close();
        const settled = await Promise.race([
          Promise.allSettled(pending),
          new Promise<null>((resolve) => setTimeout(() => resolve(null), 5_000)),
        ]);
        expect(settled).not.toBeNull();
        for (const r of settled ?? []) {
          if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(CodecallError);
        }
        // What a store keeps after close is its own (the SQLite tests reopen the file and check it).
      });

      it('rejects every method with STORE_CLOSED after close', async () => {
        const task = await store.createTask(codeInput());
        const lease = { taskId: task.id, owner: 'w', fencingToken: 1, expiresAt: 0 };
        await store.close();
        await expectCode(store.createTask(codeInput()), 'STORE_CLOSED');
        await expectCode(store.getTask(task.id), 'STORE_CLOSED');
        await expectCode(store.listTasks(), 'STORE_CLOSED');
        await expectCode(store.appendJournal(task.id, [], { fencingToken: 1 }), 'STORE_CLOSED');
        await expectCode(store.readJournal(task.id), 'STORE_CLOSED');
        await expectCode(store.updateTask(task.id, {}, { expectedVersion: 1 }), 'STORE_CLOSED');
        await expectCode(store.claimTask('w', { leaseMs: LEASE }), 'STORE_CLOSED');
        await expectCode(store.renewLease(lease, { leaseMs: LEASE }), 'STORE_CLOSED');
        await expectCode(store.releaseLease(lease), 'STORE_CLOSED');
        await expectCode(store.createBatch([{ input: codeInput() }], { tenant: 't' }), 'STORE_CLOSED');
        await expectCode(store.getBatch('batch_x'), 'STORE_CLOSED');
        await expectCode(store.readAudit(task.id), 'STORE_CLOSED');
      });
    });
  });
}
