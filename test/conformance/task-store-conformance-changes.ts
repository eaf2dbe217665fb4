import { describe, expect, it } from 'vitest';
import type { TaskStore } from '../../src/index.ts';
import { codeInput, LEASE, T0 } from './task-store-support.ts';

/** readChanges: what a process's change feed asks once per tick (skipped by stores without it). */
export function registerChangeCases(store: () => TaskStore): void {
  describe('changes', () => {
    it('tells each task changed after a cursor once, in change order, from one cursor to the next', async (ctx) => {
      const s = store();
      if (!s.readChanges) return ctx.skip();
      const before = await s.createTask(codeInput(), { now: T0 });
      const start = await s.readChanges({ after: null });
      expect(start.changes).toEqual([]);
      expect((await s.readChanges({ after: start.cursor })).changes).toEqual([]);
      // A new task, a claim, a journal append and a status change are all changes.
      const fresh = await s.createTask(codeInput(), { now: T0 + 1, attributes: { tenant: 'acme' } });
      const lease = await s.claimTask('w1', { leaseMs: LEASE, now: T0 + 2 });
      expect(lease?.taskId).toBe(before.id);
      const first = await s.readChanges({ after: start.cursor });
      expect(first.changes.map((c) => c.taskId)).toEqual([fresh.id, before.id]);
      expect(first.changes[0]).toEqual({
        taskId: fresh.id,
        tenant: 'acme',
        status: 'pending',
        pauseReason: null,
        updatedAt: new Date(T0 + 1).toISOString(),
        journalEntries: 1,
        statusSeq: expect.any(Number) as number,
      });
      expect(first.changes[1]).toMatchObject({ taskId: before.id, status: 'running' });
      await s.appendJournal(before.id, [{ type: 'clock', data: { clock: 1 } }], {
        fencingToken: lease?.fencingToken ?? -1,
      });
      const second = await s.readChanges({ after: first.cursor });
      expect(second.changes.map((c) => c.taskId)).toEqual([before.id]);
      expect(second.changes[0]?.journalEntries).toBe(2);
      const task = await s.getTask(fresh.id);
      await s.updateTask(fresh.id, { status: 'cancelled' }, { expectedVersion: task?.version ?? -1 });
      const third = await s.readChanges({ after: second.cursor });
      expect(third.changes).toEqual([expect.objectContaining({ taskId: fresh.id, status: 'cancelled' })]);
      expect((await s.readChanges({ after: third.cursor })).changes).toEqual([]);
    });

    it('answers at most `limit` changes; the rest come from its cursor', async (ctx) => {
      const s = store();
      if (!s.readChanges) return ctx.skip();
      const start = await s.readChanges({ after: null });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await s.createTask(codeInput(), { now: T0 + i })).id);
      const page = await s.readChanges({ after: start.cursor, limit: 3 });
      expect(page.changes.map((c) => c.taskId)).toEqual(ids.slice(0, 3));
      const rest = await s.readChanges({ after: page.cursor, limit: 3 });
      expect(rest.changes.map((c) => c.taskId)).toEqual(ids.slice(3));
    });

    it('tells status changes alone, in their order, each task once at its latest, by tenant', async (ctx) => {
      const s = store();
      if (!s.readStatusChanges) return ctx.skip();
      const start = await s.readStatusChanges({ after: null });
      expect(start.tasks).toEqual([]);
      const a = await s.createTask(codeInput(), { now: T0, attributes: { tenant: 'sc-a' } });
      const b = await s.createTask(codeInput(), { now: T0 + 1, attributes: { tenant: 'sc-b' } });
      const first = await s.readStatusChanges({ after: start.cursor });
      expect(first.tasks.map((t) => ('id' in t.task ? t.task.id : t.task.taskId))).toEqual([a.id, b.id]);
      const [sa, sb] = first.tasks.map((t) => t.seq);
      expect(sb).toBeGreaterThan(sa ?? Infinity);
      expect(first.cursor).toBe(sb);
      // Per tenant: only its tasks.
      const onlyB = await s.readStatusChanges({ after: start.cursor, tenant: 'sc-b' });
      expect(onlyB.tasks.map((t) => t.seq)).toEqual([sb]);
      // A claim is a status change; a journal append is not.
      let lease = await s.claimTask('w1', { leaseMs: LEASE, now: T0 + 2 });
      while (lease && lease.taskId !== a.id) lease = await s.claimTask('w1', { leaseMs: LEASE, now: T0 + 2 });
      const claimed = await s.readStatusChanges({ after: first.cursor, tenant: 'sc-a' });
      expect(claimed.tasks).toHaveLength(1);
      expect(claimed.tasks[0]?.task).toMatchObject({ id: a.id, status: 'running' });
      await s.appendJournal(a.id, [{ type: 'clock', data: { clock: 1 } }], {
        fencingToken: lease?.fencingToken ?? -1,
      });
      expect((await s.readStatusChanges({ after: claimed.cursor, tenant: 'sc-a' })).tasks).toEqual([]);
      // Two changes since the cursor: the task once, at its latest, after b's.
      const task = await s.getTask(a.id);
      const paused = await s.updateTask(
        a.id,
        { status: 'paused', pauseReason: 'user_request' },
        { expectedVersion: task?.version ?? -1 },
      );
      await s.updateTask(a.id, { status: 'cancelled' }, { expectedVersion: paused.version });
      const last = await s.readStatusChanges({ after: first.cursor });
      const mine = last.tasks.filter((t) => 'id' in t.task && t.task.id === a.id);
      expect(mine).toHaveLength(1);
      expect(mine[0]?.task).toMatchObject({ status: 'cancelled' });
      expect(mine[0]?.seq).toBe(last.cursor);
    });
  });
}
