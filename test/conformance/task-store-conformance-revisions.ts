import { describe, expect, it } from 'vitest';
import type { CodeTaskInput, TaskStore } from '../../src/index.ts';
import { codeInput, expectCode, T0 } from './task-store-support.ts';

const revisionInput = (of: string, code = 'return 2'): CodeTaskInput => ({
  ...codeInput(code),
  revisionOf: of,
});

/**
 * listRevisions (ADR 0034): the tasks created as revisions of a task, written with them, so the view of the task
 * they revise names them (`revised_by`) without reading a journal. Skipped by stores without it.
 */
export function registerRevisionCases(store: () => TaskStore): void {
  describe('revisions', () => {
    it('lists the revisions of a task oldest first, in its tenant only, and none of a task never revised', async (ctx) => {
      const s = store();
      if (!s.listRevisions) return ctx.skip();
      const acme = { attributes: { tenant: 'acme' } };
      const source = await s.createTask(codeInput('throw 1'), { now: T0, ...acme });
      const other = await s.createTask(codeInput('throw 2'), { now: T0, ...acme });
      expect(await s.listRevisions(source.id, { tenant: 'acme' })).toEqual({ taskIds: [], total: 0 });
      const first = await s.createTask(revisionInput(source.id), { now: T0 + 1, ...acme });
      // Another task's revision, and a revision of a revision, are not revisions of this one.
      await s.createTask(revisionInput(other.id), { now: T0 + 2, ...acme });
      const deeper = await s.createTask(revisionInput(first.id), { now: T0 + 3, ...acme });
      // Created in the same millisecond: still in creation order (monotonic ids).
      const second = await s.createTask(revisionInput(source.id), { now: T0 + 4, ...acme });
      const third = await s.createTask(revisionInput(source.id), { now: T0 + 4, ...acme });
      expect(await s.listRevisions(source.id, { tenant: 'acme' })).toEqual({
        taskIds: [first.id, second.id, third.id],
        total: 3,
      });
      expect(await s.listRevisions(first.id, { tenant: 'acme' })).toEqual({ taskIds: [deeper.id], total: 1 });
      // Scoped to the tenant asked for; an unknown task has none.
      expect(await s.listRevisions(source.id, { tenant: 'default' })).toEqual({ taskIds: [], total: 0 });
      expect(await s.listRevisions('task_missing', { tenant: 'acme' })).toEqual({ taskIds: [], total: 0 });
      // A plain task (and a task record) is unchanged by being revised.
      expect((await s.getTask(source.id))?.input).toEqual(codeInput('throw 1'));
    });

    it('gives the newest `limit` (default 20) oldest first, with the count of all', async (ctx) => {
      const s = store();
      if (!s.listRevisions) return ctx.skip();
      const source = await s.createTask(codeInput('throw 1'), { now: T0 });
      const ids: string[] = [];
      for (let i = 0; i < 23; i++)
        ids.push((await s.createTask(revisionInput(source.id), { now: T0 + i })).id);
      expect(await s.listRevisions(source.id, { tenant: 'default' })).toEqual({
        taskIds: ids.slice(3),
        total: 23,
      });
      expect(await s.listRevisions(source.id, { tenant: 'default', limit: 2 })).toEqual({
        taskIds: ids.slice(21),
        total: 23,
      });
      expect((await s.listRevisions(source.id, { tenant: 'default', limit: 1000 })).taskIds).toEqual(ids);
      for (const limit of [0, -1, 1.5, 1001]) {
        await expectCode(s.listRevisions(source.id, { tenant: 'default', limit }), 'INVALID_ARGUMENT');
      }
    });

    it('counts a revision once: one made in a batch, not one repeated with its idempotency key', async (ctx) => {
      const s = store();
      if (!s.listRevisions) return ctx.skip();
      const source = await s.createTask(codeInput('throw 1'), { now: T0 });
      const idempotency = { key: 'rev-1', requestHash: 'h' };
      const once = await s.createTask(revisionInput(source.id), { now: T0 + 1, idempotency });
      const again = await s.createTask(revisionInput(source.id), { now: T0 + 2, idempotency });
      expect(again.id).toBe(once.id);
      const { tasks } = await s.createBatch([{ input: revisionInput(source.id) }, { input: codeInput() }], {
        tenant: 'default',
        now: T0 + 3,
      });
      expect(await s.listRevisions(source.id, { tenant: 'default' })).toEqual({
        taskIds: [once.id, tasks[0]?.id],
        total: 2,
      });
    });
  });
}
