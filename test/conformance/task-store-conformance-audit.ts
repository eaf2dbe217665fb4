import { describe, expect, it } from 'vitest';
import type { AuditEntry, Lease, TaskStore } from '../../src/index.ts';
import { codeInput, expectCode, LEASE, T0 } from './task-store-support.ts';

const at = (ms: number): string => new Date(ms).toISOString();

/** A status link as the audit log records it; what is not given did not apply. */
function status(
  from: string,
  to: string,
  actor: string,
  journalSeq: number,
  extra: { pause_reason?: string; error_code?: string } = {},
): Record<string, unknown> {
  return {
    from,
    to,
    pause_reason: extra.pause_reason ?? null,
    error_code: extra.error_code ?? null,
    actor,
    journal_seq: journalSeq,
  };
}

const links = (entries: readonly AuditEntry[]) => entries.map((e) => [e.seq, e.type, e.data]);

/** The per-task audit log: who created a task and who changed its status, chained like the journal. */
export function registerAuditCases(store: () => TaskStore): void {
  const mustClaim = async (owner: string, now: number): Promise<Lease> => {
    const lease = await store().claimTask(owner, { leaseMs: LEASE, now });
    if (lease === null) throw new Error('nothing to claim');
    return lease;
  };

  describe('audit log', () => {
    it('records the creation and each status change with its actor and the journal head', async () => {
      const task = await store().createTask(codeInput(), {
        now: T0,
        attributes: { tenant: 'acme' },
        actor: 'key_alice',
      });
      const w1 = await mustClaim('w1', T0 + 1);
      await store().appendJournal(
        task.id,
        [
          { type: 'clock', data: { clock: 1 } },
          { type: 'clock', data: { clock: 2 } },
        ],
        { fencingToken: w1.fencingToken },
      );
      // A patch that leaves the status alone is no link.
      await store().updateTask(
        task.id,
        { resources: { cpuMs: 1, wallMs: 1, memoryBytes: 1, toolCalls: 0 } },
        {
          fencingToken: w1.fencingToken,
        },
      );
      const paused = await store().updateTask(
        task.id,
        { status: 'paused', pauseReason: 'user_request' },
        { fencingToken: w1.fencingToken, now: T0 + 2, actor: 'key_bob' },
      );
      // Resumed by version, with no lease and no actor: the system did it.
      const resumed = await store().updateTask(
        task.id,
        { status: 'pending' },
        {
          expectedVersion: paused.version,
          now: T0 + 3,
        },
      );
      expect(resumed.status).toBe('pending');
      const w2 = await mustClaim('w2', T0 + 4);
      // Ended by its runner without an actor: the lease owner did it.
      await store().updateTask(
        task.id,
        { status: 'succeeded', result: '1' },
        {
          fencingToken: w2.fencingToken,
          now: T0 + 5,
          append: [{ type: 'clock', data: { clock: 9 } }],
        },
      );
      const audit = await store().readAudit(task.id);
      expect(links(audit)).toEqual([
        [1, 'created', { tenant: 'acme', actor: 'key_alice', batch_id: null }],
        [2, 'status', status('pending', 'running', 'w1', 1)],
        [3, 'status', status('running', 'paused', 'key_bob', 3, { pause_reason: 'user_request' })],
        [4, 'status', status('paused', 'pending', 'system', 3)],
        [5, 'status', status('pending', 'running', 'w2', 3)],
        // The journal entry written with the change counts.
        [6, 'status', status('running', 'succeeded', 'w2', 4)],
      ]);
      expect(audit.map((e) => e.createdAt)).toEqual([T0, T0 + 1, T0 + 2, T0 + 3, T0 + 4, T0 + 5].map(at));
      for (const entry of audit) {
        expect(entry.taskId).toBe(task.id);
        expect(entry.checksum).toMatch(/^[0-9a-f]{64}$/);
      }
      expect(new Set(audit.map((e) => e.checksum)).size).toBe(audit.length);
      expect(await store().readAudit(task.id, { afterSeq: 4 })).toEqual(audit.slice(4));
      expect(await store().readAudit(task.id, { afterSeq: 6 })).toEqual([]);
      // Pages: at most `limit` links after `afterSeq`, and the same for the journal.
      expect(await store().readAudit(task.id, { afterSeq: 1, limit: 2 })).toEqual(audit.slice(1, 3));
      const journal = await store().readJournal(task.id);
      expect(await store().readJournal(task.id, { afterSeq: 1, limit: 1 })).toEqual(journal.slice(1, 2));
      expect(await store().readJournal(task.id, { limit: 1 })).toEqual(journal.slice(0, 1));
    });

    it('defaults the creating actor to system, and names the batch a task came in', async () => {
      const plain = await store().createTask(codeInput(), { now: T0 });
      expect(links(await store().readAudit(plain.id))).toEqual([
        [1, 'created', { tenant: 'default', actor: 'system', batch_id: null }],
      ]);
      const { batch, tasks } = await store().createBatch([{ input: codeInput() }, { input: codeInput() }], {
        tenant: 'acme',
        actor: 'key_carol',
        now: T0,
      });
      for (const task of tasks) {
        expect(links(await store().readAudit(task.id))).toEqual([
          [1, 'created', { tenant: 'acme', actor: 'key_carol', batch_id: batch.id }],
        ]);
      }
    });

    it('records error codes, a cancel that wins over a pause, a retry and a recovery', async () => {
      const failing = await store().createTask(codeInput(), { now: T0 });
      const lease = await mustClaim('w1', T0);
      await store().updateTask(
        failing.id,
        { status: 'failed', error: { code: 'GUEST_ERROR', message: 'x' } },
        {
          fencingToken: lease.fencingToken,
          now: T0 + 1,
        },
      );
      expect((await store().readAudit(failing.id)).at(-1)?.data).toEqual(
        status('running', 'failed', 'w1', 1, { error_code: 'GUEST_ERROR' }),
      );

      const cancelled = await store().createTask(codeInput(), { now: T0 + 2 });
      const c = await mustClaim('w1', T0 + 2);
      await store().requestControl(cancelled.id, 'cancel');
      await store().updateTask(
        cancelled.id,
        { status: 'paused', pauseReason: 'approval_required' },
        {
          fencingToken: c.fencingToken,
          actor: 'key_dave',
        },
      );
      expect((await store().readAudit(cancelled.id)).at(-1)?.data).toEqual(
        status('running', 'cancelled', 'key_dave', 1, { error_code: 'CANCELLED' }),
      );

      const retried = await store().createTask(codeInput(), { now: T0 + 3 });
      const r1 = await mustClaim('w1', T0 + 3);
      await store().updateTask(
        retried.id,
        { status: 'pending', runAfter: T0 + 10, retries: 1 },
        {
          fencingToken: r1.fencingToken,
        },
      );
      await mustClaim('w2', T0 + 10);
      // The second worker dies; a third recovers the task when the lease expires.
      await mustClaim('w3', T0 + 10 + LEASE);
      expect(links(await store().readAudit(retried.id)).slice(1)).toEqual([
        [2, 'status', status('pending', 'running', 'w1', 1)],
        [3, 'status', status('running', 'pending', 'w1', 1)],
        [4, 'status', status('pending', 'running', 'w2', 1)],
        [5, 'status', status('running', 'running', 'w3', 1)],
      ]);
    });

    it('writes no link for a refused change, and is NOT_FOUND for an unknown task', async () => {
      const task = await store().createTask(codeInput(), { now: T0 });
      const lease = await mustClaim('w1', T0);
      const before = await store().readAudit(task.id);
      await expectCode(
        store().updateTask(task.id, { status: 'succeeded' }, { fencingToken: lease.fencingToken + 1 }),
        'FENCED',
      );
      await expectCode(
        store().updateTask(task.id, { status: 'pending' }, { expectedVersion: task.version }),
        'VERSION_CONFLICT',
      );
      expect(await store().readAudit(task.id)).toEqual(before);
      await expectCode(store().readAudit('task_nope'), 'NOT_FOUND');
    });
  });
}
