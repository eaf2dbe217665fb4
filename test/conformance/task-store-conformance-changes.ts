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
  });
}
