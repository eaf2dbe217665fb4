import { describe, expect, it } from 'vitest';
import type { TaskStatus, TaskStore } from '../../src/index.ts';
import { codeInput, expectCode, LEASE, T0 } from './task-store-support.ts';

const NO_TASKS: Record<TaskStatus, number> = {
  pending: 0,
  running: 0,
  paused: 0,
  succeeded: 0,
  failed: 0,
  cancelled: 0,
};

/** Task attributes, batches and the list filters on them. */
export function registerBatchCases(store: () => TaskStore): void {
  describe('attributes and batches', () => {
    it('defaults the attributes of a task created without them', async () => {
      const task = await store().createTask(codeInput(), { now: T0 });
      expect(task).toMatchObject({
        tenant: 'default',
        sessionId: null,
        priority: 0,
        callbackUrl: null,
        maxRetries: 0,
        deadlineAt: null,
        batchId: null,
        retries: 0,
        runAfter: null,
      });
    });

    it('keeps the attributes a task is created with', async () => {
      const attributes = {
        tenant: 'acme',
        sessionId: 'sess-1',
        priority: -3,
        callbackUrl: 'https://hooks.example/acme',
        maxRetries: 4,
        deadlineAt: T0 + 60_000,
      };
      const task = await store().createTask(codeInput(), { now: T0, attributes });
      expect(task).toMatchObject({ ...attributes, batchId: null, retries: 0, runAfter: null });
      expect(await store().getTask(task.id)).toEqual(task);
      // Partial attributes: the rest take their defaults.
      const partial = await store().createTask(codeInput(), { attributes: { priority: 9 } });
      expect(partial).toMatchObject({ tenant: 'default', priority: 9, callbackUrl: null, maxRetries: 0 });
    });

    it("creates a batch and its tasks together, in the batch's tenant and in submission order", async () => {
      const { batch, tasks } = await store().createBatch(
        [
          { input: codeInput('return 1') },
          // The batch's tenant wins over a task's own.
          { input: codeInput('return 2'), attributes: { tenant: 'other', priority: 2, sessionId: 's' } },
          { input: codeInput('return 3'), attributes: { callbackUrl: 'https://hooks.example/t3' } },
        ],
        { tenant: 'acme', callbackUrl: 'https://hooks.example/batch', id: 'batch_one', now: T0 },
      );
      expect(batch).toEqual({
        id: 'batch_one',
        tenant: 'acme',
        callbackUrl: 'https://hooks.example/batch',
        size: 3,
        counts: { ...NO_TASKS, pending: 3 },
        taskIds: tasks.map((t) => t.id),
        createdAt: new Date(T0).toISOString(),
        completedAt: null,
      });
      expect(tasks.map((t) => t.input)).toEqual([1, 2, 3].map((n) => codeInput(`return ${n}`)));
      for (const task of tasks) {
        expect(task).toMatchObject({ batchId: 'batch_one', tenant: 'acme', status: 'pending' });
        expect(await store().getTask(task.id)).toEqual(task);
        expect((await store().readJournal(task.id)).map((e) => e.type)).toEqual(['task_input']);
      }
      expect(tasks[1]).toMatchObject({ priority: 2, sessionId: 's', callbackUrl: null });
      expect(tasks[2]).toMatchObject({ priority: 0, callbackUrl: 'https://hooks.example/t3' });
      expect(await store().getBatch('batch_one')).toEqual(batch);
      expect(await store().getBatch('batch_nope')).toBeNull();
      const generated = await store().createBatch([{ input: codeInput() }], { tenant: 'acme' });
      expect(generated.batch.id).toMatch(/^batch_/);
      expect(generated.batch.callbackUrl).toBeNull();
    });

    it('stores nothing of a batch it refuses', async () => {
      const first = await store().createBatch([{ input: codeInput() }], { tenant: 'a', id: 'batch_taken' });
      await expectCode(
        store().createBatch([{ input: codeInput('return 2') }, { input: codeInput('return 3') }], {
          tenant: 'b',
          id: 'batch_taken',
          callbackUrl: 'https://hooks.example/b',
        }),
        'INVALID_ARGUMENT',
      );
      expect(await store().getBatch('batch_taken')).toEqual(first.batch);
      const all = await store().listTasks();
      expect(all.tasks.map((t) => t.id)).toEqual(first.batch.taskIds);
      expect((await store().listTasks({ tenant: 'b' })).tasks).toEqual([]);
    });

    it("counts a batch's tasks per status as they move, and notes when the last one ends", async () => {
      const { batch } = await store().createBatch(
        [1, 2, 3, 4].map((n) => ({ input: codeInput(`return ${n}`) })),
        { tenant: 'acme', now: T0 },
      );
      const counts = async (): Promise<Readonly<Record<TaskStatus, number>> | undefined> =>
        (await store().getBatch(batch.id))?.counts;
      const claim = async (now: number) => {
        const lease = await store().claimTask('w', { leaseMs: LEASE, now });
        if (lease === null) throw new Error('nothing to claim');
        return lease;
      };
      const a = await claim(T0 + 1);
      const b = await claim(T0 + 2);
      expect(await counts()).toEqual({ ...NO_TASKS, pending: 2, running: 2 });
      await store().updateTask(
        a.taskId,
        { status: 'paused', pauseReason: 'approval_required' },
        {
          fencingToken: a.fencingToken,
          now: T0 + 3,
        },
      );
      await store().updateTask(
        b.taskId,
        { status: 'succeeded', result: '2' },
        {
          fencingToken: b.fencingToken,
          now: T0 + 4,
        },
      );
      expect(await counts()).toEqual({ ...NO_TASKS, pending: 2, paused: 1, succeeded: 1 });
      const c = await claim(T0 + 5);
      await store().updateTask(
        c.taskId,
        { status: 'failed', error: { code: 'GUEST_ERROR', message: 'x' } },
        {
          fencingToken: c.fencingToken,
          now: T0 + 6,
        },
      );
      const pendingId = batch.taskIds.find((id) => ![a.taskId, b.taskId, c.taskId].includes(id)) ?? '';
      const pending = await store().getTask(pendingId);
      await store().updateTask(
        pendingId,
        { status: 'cancelled' },
        {
          expectedVersion: pending?.version ?? -1,
          now: T0 + 7,
        },
      );
      expect(await counts()).toEqual({ ...NO_TASKS, paused: 1, succeeded: 1, failed: 1, cancelled: 1 });
      expect((await store().getBatch(batch.id))?.completedAt).toBeNull();
      const paused = await store().getTask(a.taskId);
      await store().updateTask(
        a.taskId,
        { status: 'cancelled' },
        {
          expectedVersion: paused?.version ?? -1,
          now: T0 + 8,
        },
      );
      const done = await store().getBatch(batch.id);
      expect(done?.counts).toEqual({ ...NO_TASKS, succeeded: 1, failed: 1, cancelled: 2 });
      expect(done?.completedAt).toBe(new Date(T0 + 8).toISOString());
      // The ids stay in submission order, whatever order the tasks ran in.
      expect(done?.taskIds).toEqual(batch.taskIds);
    });

    it('filters lists by tenant, session and batch, combined with status and paged by cursor', async () => {
      const made: { id: string; tenant: string; sessionId: string | null }[] = [];
      for (let i = 0; i < 9; i++) {
        const attributes = { tenant: i % 3 === 0 ? 'b' : 'a', sessionId: i % 2 === 0 ? 's1' : null };
        const task = await store().createTask(codeInput(), { now: T0 + i, attributes });
        made.push({ id: task.id, ...attributes });
      }
      const { batch } = await store().createBatch(
        [{ input: codeInput() }, { input: codeInput() }, { input: codeInput() }],
        { tenant: 'a', now: T0 + 100 },
      );
      const ofA = made.filter((t) => t.tenant === 'a').map((t) => t.id);
      // Claim the oldest two of tenant a (ids 1 and 2; task 0 is b's) without touching b's.
      await store().claimTask('w', { leaseMs: LEASE, now: T0 + 200, taskId: ofA[0] ?? '' });
      await store().claimTask('w', { leaseMs: LEASE, now: T0 + 200, taskId: ofA[1] ?? '' });

      const all = async (filter: Parameters<TaskStore['listTasks']>[0]): Promise<string[]> => {
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < 20; page++) {
          const result = await store().listTasks({ ...filter, limit: 2, ...(cursor ? { cursor } : {}) });
          expect(result.tasks.length).toBeLessThanOrEqual(2);
          seen.push(...result.tasks.map((t) => t.id));
          if (result.nextCursor === null) return seen;
          cursor = result.nextCursor;
        }
        throw new Error('paging did not end');
      };
      // A batch's tasks share their creation time; they list in submission order.
      const batchIds = batch.taskIds;
      expect(await all({ tenant: 'a' })).toEqual([...ofA, ...batchIds]);
      expect(await all({ tenant: 'a', status: 'pending' })).toEqual([...ofA.slice(2), ...batchIds]);
      expect(await all({ tenant: 'a', status: 'running' })).toEqual(ofA.slice(0, 2));
      expect(await all({ tenant: 'b', status: 'running' })).toEqual([]);
      expect(await all({ tenant: 'b' })).toEqual(made.filter((t) => t.tenant === 'b').map((t) => t.id));
      expect(await all({ tenant: 'a', sessionId: 's1' })).toEqual(
        made.filter((t) => t.tenant === 'a' && t.sessionId === 's1').map((t) => t.id),
      );
      expect(await all({ sessionId: 's1', status: 'pending' })).toEqual(
        made.filter((t) => t.sessionId === 's1' && !ofA.slice(0, 2).includes(t.id)).map((t) => t.id),
      );
      expect(await all({ batchId: batch.id })).toEqual(batchIds);
      expect(await all({ batchId: batch.id, tenant: 'b' })).toEqual([]);
      expect(await all({ batchId: 'batch_nope' })).toEqual([]);
    });

    it('lists paused tasks whose deadline has passed, and only those', async () => {
      const early = await store().createTask(codeInput('return 1'), {
        now: T0,
        attributes: { deadlineAt: T0 + 100, sessionId: 'deadline-case' },
      });
      const later = await store().createTask(codeInput('return 2'), {
        now: T0,
        attributes: { deadlineAt: T0 + 10_000, sessionId: 'deadline-case' },
      });
      const queued = await store().createTask(codeInput('return 3'), {
        now: T0,
        attributes: { deadlineAt: T0 + 100, sessionId: 'deadline-case' },
      });
      for (const t of [early, later]) {
        await store().updateTask(
          t.id,
          { status: 'paused', pauseReason: 'user_request' },
          { expectedVersion: 1 },
        );
      }
      const due = await store().listTasks({ deadlineBefore: T0 + 200 });
      const ids = due.tasks.map((t) => t.id);
      expect(ids).toContain(early.id);
      expect(ids).not.toContain(later.id);
      expect(ids).not.toContain(queued.id);
    });
  });
}
