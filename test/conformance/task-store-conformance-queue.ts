import { describe, expect, it } from 'vitest';
import type { Lease, NewTaskAttributes, TaskStore } from '../../src/index.ts';
import { codeInput, expectCode, LEASE, T0 } from './task-store-support.ts';

/** Which task a claim picks: recovery, priority, FIFO, backoff, the per-tenant and global caps; the retry. */
export function registerQueueCases(store: () => TaskStore): void {
  const create = async (now: number, attributes: NewTaskAttributes = {}): Promise<string> =>
    (await store().createTask(codeInput(), { now, attributes })).id;
  /** Claims until nothing is left to claim; the leases in claim order. */
  const claimAll = async (
    now: number,
    options: { maxPerTenant?: number; tenantShare?: number; maxRunning?: number } = {},
  ): Promise<Lease[]> => {
    const leases: Lease[] = [];
    for (let lease = await claim(now, options); lease !== null; lease = await claim(now, options)) {
      leases.push(lease);
    }
    return leases;
  };
  const ids = (leases: readonly Lease[]): string[] => leases.map((l) => l.taskId);
  const claim = (
    now: number,
    options: { maxPerTenant?: number; tenantShare?: number; maxRunning?: number; taskId?: string } = {},
  ) => store().claimTask('w', { leaseMs: LEASE, now, ...options });
  const mustClaim = async (now: number, owner = 'w'): Promise<Lease> => {
    const lease = await store().claimTask(owner, { leaseMs: LEASE, now });
    if (lease === null) throw new Error('nothing to claim');
    return lease;
  };

  describe('the queue', () => {
    it('claims the highest priority first, oldest first within a priority', async () => {
      const low = await create(T0, { priority: -1 });
      const old0 = await create(T0 + 1);
      const high1 = await create(T0 + 2, { priority: 5 });
      const new0 = await create(T0 + 3);
      const high2 = await create(T0 + 4, { priority: 5 });
      const mid = await create(T0 + 5, { priority: 1 });
      expect(ids(await claimAll(T0 + 10))).toEqual([high1, high2, mid, old0, new0, low]);
    });

    it('claims the tasks of a batch in submission order', async () => {
      const { batch } = await store().createBatch(
        Array.from({ length: 8 }, (_, i) => ({ input: codeInput(`return ${i}`) })),
        { tenant: 'acme', now: T0 },
      );
      expect(ids(await claimAll(T0 + 1))).toEqual(batch.taskIds);
    });

    it('retries a running task: back to pending, not claimed before runAfter, then claimed as usual', async () => {
      const id = await create(T0, { maxRetries: 2 });
      const first = await mustClaim(T0, 'w1');
      const queued = await store().updateTask(
        id,
        { status: 'pending', runAfter: T0 + 1000, retries: 1 },
        { fencingToken: first.fencingToken, now: T0 + 10 },
      );
      expect(queued).toMatchObject({ status: 'pending', runAfter: T0 + 1000, retries: 1, maxRetries: 2 });
      expect(queued.requestedAction).toBeNull();
      // The lease went with the run: the old token no longer renews.
      await expectCode(store().renewLease(first, { leaseMs: LEASE, now: T0 + 11 }), 'FENCED');
      // A task queued behind it is not held up by its backoff.
      const behind = await create(T0 + 20);
      expect(await claim(T0 + 999, { taskId: id })).toBeNull();
      expect((await claim(T0 + 999))?.taskId).toBe(behind);
      expect(await claim(T0 + 999)).toBeNull();
      const second = await claim(T0 + 1000);
      expect(second).toMatchObject({ taskId: id, fencingToken: first.fencingToken + 1 });
      expect(await store().getTask(id)).toMatchObject({
        status: 'running',
        runAfter: null,
        retries: 1,
        attempts: 2,
      });
    });

    it('keeps runAfter only while the task is pending', async () => {
      const id = await create(T0);
      const lease = await mustClaim(T0);
      const queued = await store().updateTask(
        id,
        { status: 'pending', runAfter: T0 + 500 },
        {
          fencingToken: lease.fencingToken,
        },
      );
      expect(queued.retries).toBe(0);
      const cancelled = await store().updateTask(
        id,
        { status: 'cancelled' },
        {
          expectedVersion: queued.version,
        },
      );
      expect(cancelled).toMatchObject({ status: 'cancelled', runAfter: null });
      expect(await claim(T0 + 1000)).toBeNull();
    });

    it('caps the running tasks of each tenant with maxPerTenant', async () => {
      const a1 = await create(T0, { tenant: 'a' });
      const a2 = await create(T0 + 1, { tenant: 'a' });
      const a3 = await create(T0 + 2, { tenant: 'a' });
      const b1 = await create(T0 + 3, { tenant: 'b' });
      const b2 = await create(T0 + 4, { tenant: 'b', priority: -1 });
      const firstRound = await claimAll(T0 + 10, { maxPerTenant: 1 });
      expect(ids(firstRound)).toEqual([a1, b1]);
      // The cap holds for a named task too.
      expect(await claim(T0 + 10, { maxPerTenant: 1, taskId: b2 })).toBeNull();
      // Without a cap the queue goes on; with a higher one only up to it.
      expect((await claim(T0 + 10))?.taskId).toBe(a2);
      expect(ids(await claimAll(T0 + 10, { maxPerTenant: 2 }))).toEqual([b2]);
      const lease = await store().claimTask('w', { leaseMs: LEASE, now: T0 + 10, maxPerTenant: 3 });
      expect(lease?.taskId).toBe(a3);
      // A task that ends frees its tenant's slot.
      const t = await create(T0 + 20, { tenant: 'b' });
      expect(await claimAll(T0 + 30, { maxPerTenant: 2 })).toEqual([]);
      await store().updateTask(
        b1,
        { status: 'succeeded', result: '1' },
        {
          fencingToken: firstRound[1]?.fencingToken ?? -1,
        },
      );
      expect(ids(await claimAll(T0 + 30, { maxPerTenant: 2 }))).toEqual([t]);
    });

    it('lets a tenant past its tenantShare while no other tenant has a claimable task, never ahead of one', async () => {
      const flood: string[] = [];
      for (let i = 0; i < 6; i++) flood.push(await create(T0 + i, { tenant: 'a', priority: 100 }));
      // Alone, tenant a takes every slot: the share is soft (work-conserving).
      expect(ids(await claimAll(T0 + 10, { tenantShare: 1, maxRunning: 4 }))).toEqual(flood.slice(0, 4));
      // Tasks of b and c (later, b's at a lower priority) each take the next free slot, ahead of a's queue.
      const b = await create(T0 + 20, { tenant: 'b', priority: -100 });
      const c = await create(T0 + 21, { tenant: 'c' });
      expect(ids(await claimAll(T0 + 30, { tenantShare: 1, maxRunning: 5 }))).toEqual([b]);
      expect(ids(await claimAll(T0 + 30, { tenantShare: 1, maxRunning: 6 }))).toEqual([c]);
      // With no one else waiting, a's queue goes on past its share.
      expect(ids(await claimAll(T0 + 50, { tenantShare: 1, maxRunning: 7 }))).toEqual([flood[4]]);
    });

    it('is fair across tenants: a flood at priority 100 does not starve another tenant at priority 0', async () => {
      const flood: string[] = [];
      for (let i = 0; i < 50; i++) flood.push(await create(T0 + i, { tenant: 'a', priority: 100 }));
      const b = await create(T0 + 100, { tenant: 'b', priority: 0 });
      const first = await claimAll(T0 + 200, { maxRunning: 2 });
      // Two slots: one for each tenant, whatever the priorities and the order of submission.
      expect(ids(first)).toEqual([flood[0], b]);
    });

    it('takes turns between tenants even when each task ends before the next claim', async () => {
      for (let i = 0; i < 10; i++) await create(T0 + i, { tenant: 'a', priority: 100 });
      const b1 = await create(T0 + 20, { tenant: 'b', priority: -100 });
      const b2 = await create(T0 + 21, { tenant: 'b', priority: -100 });
      const order: string[] = [];
      for (let n = 0; n < 5; n++) {
        const lease = await mustClaim(T0 + 100 + n);
        order.push(lease.taskId);
        await store().updateTask(
          lease.taskId,
          { status: 'succeeded', result: '1' },
          { fencingToken: lease.fencingToken },
        );
      }
      // One slot, tasks ending at once: a, b, a, b, a (priority orders a tenant's own tasks only).
      expect(order.indexOf(b1)).toBe(1);
      expect(order.indexOf(b2)).toBe(3);
    });

    it('orders a tenant by priority then FIFO within its turn', async () => {
      const low = await create(T0, { tenant: 'a', priority: -1 });
      const high = await create(T0 + 1, { tenant: 'a', priority: 5 });
      const b = await create(T0 + 2, { tenant: 'b' });
      expect(ids(await claimAll(T0 + 10))).toEqual([high, b, low]);
    });

    it('caps the running tasks over every runner with maxRunning, an expired lease still counting', async () => {
      const first = await create(T0, { tenant: 'a' });
      const second = await create(T0 + 1, { tenant: 'b' });
      const third = await create(T0 + 2, { tenant: 'a' });
      const fourth = await create(T0 + 3, { tenant: 'b' });
      // Two runners, one cap: what one runs counts for the other.
      const w1 = await store().claimTask('w1', { leaseMs: LEASE, now: T0 + 10, maxRunning: 2 });
      const w2 = await store().claimTask('w2', { leaseMs: LEASE, now: T0 + 10, maxRunning: 2 });
      expect([w1?.taskId, w2?.taskId]).toEqual([first, second]);
      expect(await store().claimTask('w1', { leaseMs: LEASE, now: T0 + 10, maxRunning: 2 })).toBeNull();
      expect(await claim(T0 + 10, { maxRunning: 2, taskId: third })).toBeNull();
      // With both caps, the tighter one wins; a higher global cap lets the queue go on.
      expect(await claim(T0 + 10, { maxRunning: 3, maxPerTenant: 1 })).toBeNull();
      expect((await claim(T0 + 20, { maxRunning: 3 }))?.taskId).toBe(third);
      // Expired leases are recovered (they hold their slots) but free none: the queue waits.
      const late = T0 + 10 + LEASE;
      expect((await claim(late, { maxRunning: 3 }))?.taskId).toBe(first);
      const recovered = await claim(late, { maxRunning: 3 });
      expect(recovered?.taskId).toBe(second);
      expect(await claim(late + 1, { maxRunning: 3 })).toBeNull();
      // A task that ends frees its slot.
      await store().updateTask(
        second,
        { status: 'succeeded', result: '1' },
        { fencingToken: recovered?.fencingToken ?? -1 },
      );
      expect(ids(await claimAll(late + 1, { maxRunning: 3 }))).toEqual([fourth]);
    });

    it('recovers an expired lease ahead of the queue, whatever the priorities and the cap', async () => {
      const low = await create(T0, { priority: -5, tenant: 'a' });
      const first = await mustClaim(T0, 'w1');
      expect(first.taskId).toBe(low);
      const sameTenant = await create(T0 + 1, { priority: 5, tenant: 'a' });
      const high = await create(T0 + 2, { priority: 5, tenant: 'b' });
      // Before expiry the queue is served (the cap keeps tenant a's second task waiting).
      expect(await claim(T0 + LEASE - 1, { maxPerTenant: 1 })).toMatchObject({ taskId: high });
      // From expiry, the task whose worker died comes first and keeps its tenant's slot.
      const recovered = await store().claimTask('w2', {
        leaseMs: LEASE,
        now: T0 + LEASE,
        maxPerTenant: 1,
      });
      expect(recovered).toMatchObject({ taskId: low, owner: 'w2', fencingToken: first.fencingToken + 1 });
      expect(await claim(T0 + LEASE, { maxPerTenant: 1 })).toBeNull();
      expect((await claim(T0 + LEASE))?.taskId).toBe(sameTenant);
    });
  });
}
