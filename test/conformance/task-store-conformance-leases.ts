import { describe, expect, it } from 'vitest';
import type { TaskStore } from '../../src/index.ts';
import { codeInput, expectCode, LEASE, T0 } from './task-store-support.ts';

/** Leases of owners known to be gone end at once (expireLeases); tasks paused by a shutdown can be listed. */
export function registerLeaseCases(store: () => TaskStore): void {
  const running = async (owner: string, now = T0) => {
    await store().createTask(codeInput(), { now });
    const lease = await store().claimTask(owner, { leaseMs: LEASE, now });
    if (lease === null) throw new Error('nothing to claim');
    return lease;
  };

  describe('leases of gone owners', () => {
    it('ends only the unexpired leases of the owners judged gone, and the next claim fences them', async () => {
      const dead1 = await running('dead', T0);
      const dead2 = await running('dead', T0 + 1);
      const alive = await running('alive', T0 + 2);
      const asked: string[] = [];
      const freed = await store().expireLeases(
        (owner) => {
          asked.push(owner);
          return owner === 'dead';
        },
        { now: T0 + 10 },
      );
      expect(freed.sort()).toEqual([dead1.taskId, dead2.taskId].sort());
      expect(asked.sort()).toEqual(['alive', 'dead']);
      // Nothing else changed: still running, not claimed again; the live owner still renews.
      expect(await store().getTask(dead1.taskId)).toMatchObject({ status: 'running', attempts: 1 });
      await store().renewLease(alive, { leaseMs: LEASE, now: T0 + 11 });
      // Claimable now, long before the lease would have run out; the new claim fences the dead owner.
      const taken = await store().claimTask('next', { leaseMs: LEASE, now: T0 + 12 });
      expect(taken).toMatchObject({ taskId: dead1.taskId, fencingToken: dead1.fencingToken + 1 });
      await expectCode(store().renewLease(dead1, { leaseMs: LEASE, now: T0 + 13 }), 'FENCED');
      await expectCode(
        store().appendJournal(dead1.taskId, [{ type: 'clock', data: { clock: 1 } }], {
          fencingToken: dead1.fencingToken,
        }),
        'FENCED',
      );
      expect((await store().claimTask('next', { leaseMs: LEASE, now: T0 + 14 }))?.taskId).toBe(dead2.taskId);
      expect(await store().claimTask('next', { leaseMs: LEASE, now: T0 + 15 })).toBeNull();
    });

    it('asks about nobody when no lease is held, and frees nothing when nobody is gone', async () => {
      const asked: string[] = [];
      expect(await store().expireLeases((o) => (asked.push(o), true), { now: T0 })).toEqual([]);
      expect(asked).toEqual([]);
      const lease = await running('w', T0);
      expect(await store().expireLeases(() => false, { now: T0 + 1 })).toEqual([]);
      expect(await store().claimTask('other', { leaseMs: LEASE, now: T0 + 2 })).toBeNull();
      // An expired lease is recovered by the claim anyway: it is not asked about.
      asked.length = 0;
      expect(await store().expireLeases((o) => (asked.push(o), true), { now: lease.expiresAt })).toEqual([]);
      expect(asked).toEqual([]);
    });
  });

  describe('shutdown pauses', () => {
    it('lists the tasks paused for one reason, oldest first', async () => {
      const a = await running('w', T0);
      const b = await running('w', T0 + 1);
      const c = await running('w', T0 + 2);
      await store().updateTask(a.taskId, { status: 'paused', pauseReason: 'shutdown' }, a);
      await store().updateTask(b.taskId, { status: 'paused', pauseReason: 'user_request' }, b);
      await store().updateTask(c.taskId, { status: 'paused', pauseReason: 'shutdown' }, c);
      const { tasks } = await store().listTasks({ status: 'paused', pauseReason: 'shutdown' });
      expect(tasks.map((t) => t.id)).toEqual([a.taskId, c.taskId]);
    });
  });
}
