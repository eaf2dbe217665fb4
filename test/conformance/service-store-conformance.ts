// What every ServiceStore must do (API keys, the webhook outbox), on a store that is also the TaskStore whose
// status changes queue the webhooks: one transaction covers a task's change and its message.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey, newApiKey } from '../../src/auth/api-keys.ts';
import type {
  Lease,
  NewTaskAttributes,
  ServiceStore,
  TaskStatus,
  TaskStore,
  WebhookMessage,
} from '../../src/spec/index.ts';
import { codeInput, expectCode, LEASE, T0 } from './task-store-support.ts';

export type ServiceTaskStore = TaskStore & ServiceStore;

/** A webhook message as the store keeps it, beyond what `dueWebhooks` shows (settled messages included). */
export interface OutboxRow {
  readonly state: 'pending' | 'delivered' | 'failed';
  readonly attempts: number;
  readonly body: string | null;
  readonly last_error: string | null;
  readonly next_attempt_at: number;
  readonly finished_at: number | null;
}

export interface ServiceStoreConformanceOptions {
  /** A second store on the same data, as another server would open it. */
  readonly reopen?: (store: ServiceTaskStore) => Promise<ServiceTaskStore>;
  /** Everything the store keeps of API keys, as text (to show that no key itself is kept). */
  readonly storedKeys?: (store: ServiceTaskStore) => Promise<string>;
  /** A message's stored row, settled or not; undefined for an unknown id. */
  readonly outboxRow?: (store: ServiceTaskStore, id: string) => Promise<OutboxRow | undefined>;
}

const HOOK = 'https://hooks.example/task';
const BATCH_HOOK = 'https://hooks.example/batch';
const FAR = T0 + 1e9;

/** The behaviour every ServiceStore must show; each case gets a fresh, empty store. */
export function describeServiceStoreConformance(
  name: string,
  createStore: () => Promise<ServiceTaskStore>,
  options: ServiceStoreConformanceOptions = {},
): void {
  describe(`${name} service store conformance`, () => {
    let store: ServiceTaskStore;
    beforeEach(async () => {
      store = await createStore();
    });
    afterEach(async () => {
      await store.close();
    });
    for (const [hook, what] of [
      ['reopen', 'the case of a second connection'],
      ['storedKeys', 'the look at stored keys'],
      ['outboxRow', 'the look at stored webhook rows'],
    ] as const) {
      if (options[hook] === undefined) {
        console.warn(`[service-store conformance] ${name}: no ${hook}() hook: skipping ${what}`);
      }
    }

    const outbox = (): Promise<WebhookMessage[]> => store.dueWebhooks({ now: FAR, limit: 1000 });

    async function running(now: number, attributes: NewTaskAttributes = {}): Promise<Lease> {
      const task = await store.createTask(codeInput(), { now, attributes });
      const lease = await store.claimTask('w', { leaseMs: LEASE, now, taskId: task.id });
      if (lease === null) throw new Error('not claimed');
      return lease;
    }

    async function claim(taskId: string, now: number): Promise<Lease> {
      const lease = await store.claimTask('w', { leaseMs: LEASE, now, taskId });
      if (lease === null) throw new Error('not claimed');
      return lease;
    }

    /** Moves a task by version (no lease needed): a resume, a cancel of a queued or paused task. */
    async function move(taskId: string, status: TaskStatus, now: number): Promise<void> {
      const task = await store.getTask(taskId);
      await store.updateTask(taskId, { status }, { expectedVersion: task?.version ?? -1, now });
    }

    describe('webhook outbox', () => {
      it('queues a message for each end and each pause but a shutdown, of tasks with a callback only', async () => {
        const cb = { callbackUrl: HOOK };
        // Paused for approval, resumed, retried, claimed again, succeeded.
        const a = await running(T0, cb);
        await store.updateTask(
          a.taskId,
          { status: 'paused', pauseReason: 'approval_required' },
          {
            fencingToken: a.fencingToken,
            now: T0 + 1,
          },
        );
        await move(a.taskId, 'pending', T0 + 2);
        const a2 = await claim(a.taskId, T0 + 3);
        await store.updateTask(
          a.taskId,
          { status: 'pending', runAfter: T0 + 4, retries: 1 },
          {
            fencingToken: a2.fencingToken,
            now: T0 + 4,
          },
        );
        const a3 = await claim(a.taskId, T0 + 5);
        await store.updateTask(
          a.taskId,
          { status: 'succeeded', result: '42' },
          {
            fencingToken: a3.fencingToken,
            now: T0 + 6,
          },
        );
        // Paused by a shutdown (no message), resumed, failed.
        const b = await running(T0 + 10, cb);
        await store.updateTask(
          b.taskId,
          { status: 'paused', pauseReason: 'shutdown' },
          {
            fencingToken: b.fencingToken,
            now: T0 + 11,
          },
        );
        await move(b.taskId, 'pending', T0 + 12);
        const b2 = await claim(b.taskId, T0 + 13);
        const error = { code: 'GUEST_ERROR' as const, message: 'boom' };
        await store.updateTask(
          b.taskId,
          { status: 'failed', error },
          { fencingToken: b2.fencingToken, now: T0 + 14 },
        );
        // Cancelled while queued.
        const c = await store.createTask(codeInput(), { now: T0 + 20, attributes: cb });
        await move(c.id, 'cancelled', T0 + 21);
        // The same life without a callback: nothing.
        const d = await running(T0 + 30);
        await store.updateTask(
          d.taskId,
          { status: 'paused', pauseReason: 'user_request' },
          {
            fencingToken: d.fencingToken,
            now: T0 + 31,
          },
        );
        await move(d.taskId, 'cancelled', T0 + 32);

        const messages = await outbox();
        expect(messages.map((m) => [m.event, m.taskId, m.createdAt])).toEqual([
          ['task.paused', a.taskId, T0 + 1],
          ['task.succeeded', a.taskId, T0 + 6],
          ['task.failed', b.taskId, T0 + 14],
          ['task.cancelled', c.id, T0 + 21],
        ]);
        for (const m of messages) {
          expect(m).toMatchObject({
            url: HOOK,
            batchId: null,
            body: null,
            attempts: 0,
            nextAttemptAt: m.createdAt,
          });
          expect(m.id).toMatch(/^msg_[0-9a-f]{24}$/);
        }
        expect(new Set(messages.map((m) => m.id)).size).toBe(messages.length);
        expect(messages.map((m) => m.snapshot)).toEqual([
          { status: 'paused', pause_reason: 'approval_required', error: null, result: null, at: T0 + 1 },
          { status: 'succeeded', pause_reason: null, error: null, result: '42', at: T0 + 6 },
          { status: 'failed', pause_reason: null, error, result: null, at: T0 + 14 },
          { status: 'cancelled', pause_reason: null, error: null, result: null, at: T0 + 21 },
        ]);
        expect(await store.webhookCounts()).toEqual({ pending: 4, delivered: 0, failed: 0 });
      });

      it('queues the pause of a queued task, the cancel of a paused one, and a cancel that wins over a pause', async () => {
        const queued = await store.createTask(codeInput(), { now: T0, attributes: { callbackUrl: HOOK } });
        await store.updateTask(
          queued.id,
          { status: 'paused', pauseReason: 'user_request' },
          {
            expectedVersion: queued.version,
            now: T0 + 1,
          },
        );
        await move(queued.id, 'cancelled', T0 + 2);
        const run = await running(T0 + 3, { callbackUrl: HOOK });
        await store.requestControl(run.taskId, 'cancel');
        await store.updateTask(
          run.taskId,
          { status: 'paused', pauseReason: 'awaiting_input' },
          {
            fencingToken: run.fencingToken,
            now: T0 + 4,
          },
        );
        expect((await outbox()).map((m) => [m.event, m.taskId, m.snapshot.pause_reason])).toEqual([
          ['task.paused', queued.id, 'user_request'],
          ['task.cancelled', queued.id, null],
          ['task.cancelled', run.taskId, null],
        ]);
      });

      it('writes the message in the transaction of the status change: a change that fails queues nothing', async () => {
        const lease = await running(T0, { callbackUrl: HOOK });
        // The status is written before the bad entry is refused; both roll back, and the message with them.
        await expectCode(
          store.updateTask(
            lease.taskId,
            { status: 'succeeded', result: '1' },
            {
              fencingToken: lease.fencingToken,
              append: [{ type: 'control', data: [] as unknown as { action: 'cancel' } }],
            },
          ),
          'INVALID_ARGUMENT',
        );
        expect(await store.getTask(lease.taskId)).toMatchObject({ status: 'running' });
        expect(await outbox()).toEqual([]);
        const done = await store.updateTask(
          lease.taskId,
          { status: 'succeeded', result: '1' },
          {
            fencingToken: lease.fencingToken,
            now: T0 + 1,
          },
        );
        // An update that does not change the status queues nothing more.
        await store.updateTask(lease.taskId, { result: '2' }, { expectedVersion: done.version, now: T0 + 2 });
        expect((await outbox()).map((m) => m.event)).toEqual(['task.succeeded']);
        // Another connection sees it: it was committed with the change.
        if (options.reopen) {
          const other = await options.reopen(store);
          try {
            expect((await other.dueWebhooks({ now: FAR, limit: 1000 })).map((m) => m.event)).toEqual([
              'task.succeeded',
            ]);
          } finally {
            await other.close();
          }
        }
      });
    });

    describe('batch completion', () => {
      const endings: readonly { order: readonly number[]; outcomes: readonly TaskStatus[] }[] = [
        { order: [0, 1, 2], outcomes: ['succeeded', 'failed', 'cancelled'] },
        { order: [2, 0, 1], outcomes: ['cancelled', 'succeeded', 'succeeded'] },
        { order: [1, 2, 0], outcomes: ['failed', 'failed', 'cancelled'] },
        { order: [2, 1, 0], outcomes: ['succeeded', 'succeeded', 'succeeded'] },
      ];

      for (const { order, outcomes } of endings) {
        it(`queues batch.completed once, when the last task ends (order ${order.join('')}, ${outcomes.join('/')})`, async () => {
          const { batch, tasks } = await store.createBatch(
            [0, 1, 2].map((i) => ({ input: codeInput(`return ${i}`) })),
            { tenant: 'acme', callbackUrl: BATCH_HOOK, now: T0 },
          );
          // One task pauses on the way: not an end, so it does not complete the batch.
          const first = tasks[order[0] ?? 0];
          const lease = await claim(first?.id ?? '', T0 + 1);
          await store.updateTask(
            first?.id ?? '',
            { status: 'paused', pauseReason: 'approval_required' },
            {
              fencingToken: lease.fencingToken,
              now: T0 + 2,
            },
          );
          await move(first?.id ?? '', 'pending', T0 + 3);
          let now = T0 + 10;
          for (const [step, index] of order.entries()) {
            const id = tasks[index]?.id ?? '';
            const outcome = outcomes[step] ?? 'succeeded';
            now += 10;
            if (outcome === 'cancelled') await move(id, 'cancelled', now);
            else {
              const l = await claim(id, now);
              const patch =
                outcome === 'failed' ? { error: { code: 'GUEST_ERROR' as const, message: 'x' } } : {};
              await store.updateTask(
                id,
                { status: outcome, ...patch },
                { fencingToken: l.fencingToken, now },
              );
            }
            const completed = (await outbox()).filter((m) => m.event === 'batch.completed');
            const record = await store.getBatch(batch.id);
            if (step < order.length - 1) {
              expect(completed).toEqual([]);
              expect(record?.completedAt).toBeNull();
            } else {
              expect(completed).toHaveLength(1);
              expect(completed[0]).toMatchObject({
                batchId: batch.id,
                taskId: null,
                url: BATCH_HOOK,
                snapshot: { at: now },
                createdAt: now,
              });
              expect(record?.completedAt).toBe(new Date(now).toISOString());
            }
          }
          // Updates of ended tasks do not complete it again.
          for (const task of tasks) {
            const ended = await store.getTask(task.id);
            await store.updateTask(
              task.id,
              { result: 'later' },
              { expectedVersion: ended?.version ?? -1, now: FAR },
            );
          }
          expect((await outbox()).filter((m) => m.event === 'batch.completed')).toHaveLength(1);
          expect((await store.getBatch(batch.id))?.completedAt).toBe(new Date(now).toISOString());
        });
      }

      it('completes a batch without a callback without a message; tasks with their own callback still report', async () => {
        const { batch, tasks } = await store.createBatch(
          [{ input: codeInput() }, { input: codeInput(), attributes: { callbackUrl: HOOK } }],
          { tenant: 'acme', now: T0 },
        );
        for (const [i, task] of tasks.entries()) await move(task.id, 'cancelled', T0 + 1 + i);
        expect((await store.getBatch(batch.id))?.completedAt).toBe(new Date(T0 + 2).toISOString());
        expect((await outbox()).map((m) => [m.event, m.taskId, m.batchId])).toEqual([
          ['task.cancelled', tasks[1]?.id, batch.id],
        ]);
      });

      it("lists the batch's message after its last task's, though both come from one change", async () => {
        const { batch, tasks } = await store.createBatch(
          [{ input: codeInput(), attributes: { callbackUrl: HOOK } }],
          {
            tenant: 'acme',
            callbackUrl: BATCH_HOOK,
            now: T0,
          },
        );
        const lease = await claim(tasks[0]?.id ?? '', T0);
        await store.updateTask(
          tasks[0]?.id ?? '',
          { status: 'succeeded', result: '1' },
          {
            fencingToken: lease.fencingToken,
            now: T0 + 1,
          },
        );
        for (let i = 0; i < 5; i++) {
          expect((await outbox()).map((m) => [m.event, m.batchId, m.createdAt])).toEqual([
            ['task.succeeded', batch.id, T0 + 1],
            ['batch.completed', batch.id, T0 + 1],
          ]);
        }
      });
    });

    describe('API keys', () => {
      it('creates, finds, lists and revokes keys; only live keys are found', async () => {
        const alice = newApiKey();
        const bob = newApiKey();
        const created = await store.createApiKey(
          { id: alice.id, keyHash: alice.keyHash, tenant: 'acme', role: 'admin', name: 'ops' },
          { now: T0 },
        );
        expect(created).toEqual({
          id: alice.id,
          tenant: 'acme',
          role: 'admin',
          name: 'ops',
          createdAt: new Date(T0).toISOString(),
          revokedAt: null,
        });
        const member = await store.createApiKey(
          { id: bob.id, keyHash: bob.keyHash, tenant: 'beta', role: 'member' },
          { now: T0 + 1 },
        );
        expect(member.name).toBeNull();
        expect(await store.findApiKey(hashApiKey(alice.key))).toEqual(created);
        expect(await store.findApiKey(hashApiKey('cc_not-a-key'))).toBeNull();
        expect(await store.listApiKeys()).toEqual([created, member]);

        const revoked = await store.revokeApiKey(alice.id, { now: T0 + 5 });
        expect(revoked).toEqual({ ...created, revokedAt: new Date(T0 + 5).toISOString() });
        expect(await store.findApiKey(alice.keyHash)).toBeNull();
        expect(await store.findApiKey(bob.keyHash)).toEqual(member);
        // Revoking twice keeps the first time; revoked keys stay listed.
        expect(await store.revokeApiKey(alice.id, { now: T0 + 9 })).toEqual(revoked);
        expect(await store.listApiKeys()).toEqual([revoked, member]);
        await expectCode(store.revokeApiKey('key_nope'), 'NOT_FOUND');
        // The servers' revocation check: which of the ids asked for are revoked (unknown ids are not).
        expect(await store.revokedApiKeys([alice.id, bob.id, 'key_nope'])).toEqual([alice.id]);
        expect(await store.revokedApiKeys([])).toEqual([]);
      });

      it('keeps only the hash of a key, and refuses a second key with the same hash', async () => {
        const key = newApiKey();
        await store.createApiKey({ id: key.id, keyHash: key.keyHash, tenant: 'acme', role: 'member' });
        if (options.storedKeys) expect(await options.storedKeys(store)).not.toContain(key.key);
        expect(JSON.stringify(await store.listApiKeys())).not.toContain(key.key);
        await expectCode(
          store.createApiKey({ id: 'key_other', keyHash: key.keyHash, tenant: 'beta', role: 'admin' }),
          'STORE_ERROR',
        );
        expect(await store.listApiKeys()).toHaveLength(1);
      });
    });

    describe('webhook attempts', () => {
      /** Three tasks with a callback, ended at T0 + 10, + 20 and + 30: three pending messages. */
      async function threeMessages(): Promise<WebhookMessage[]> {
        for (const at of [T0 + 10, T0 + 20, T0 + 30]) {
          const task = await store.createTask(codeInput(), { now: at, attributes: { callbackUrl: HOOK } });
          await move(task.id, 'cancelled', at);
        }
        return outbox();
      }

      /** Checks the message's stored row, when the store can show it (the outboxRow hook). */
      async function expectRow(id: string, expected: Partial<OutboxRow>, exact = true): Promise<void> {
        if (!options.outboxRow) return;
        const got = await options.outboxRow(store, id);
        if (exact) expect(got).toEqual(expected);
        else expect(got).toMatchObject(expected);
      }

      it('lists due messages oldest first, up to the limit', async () => {
        const [m1, m2, m3] = await threeMessages();
        expect(await store.dueWebhooks({ now: T0 + 9, limit: 10 })).toEqual([]);
        expect(await store.dueWebhooks({ now: T0 + 20, limit: 10 })).toEqual([m1, m2]);
        expect(await store.dueWebhooks({ now: FAR, limit: 2 })).toEqual([m1, m2]);
        expect(await store.dueWebhooks({ now: FAR, limit: 10 })).toEqual([m1, m2, m3]);
        expect(await store.nextWebhookAt()).toBe(T0 + 10);
      });

      it('lists the messages of one instant in the order of their changes', async () => {
        const changes: [string, string][] = [];
        for (let i = 0; i < 6; i++) {
          const task = await store.createTask(codeInput(), { now: T0, attributes: { callbackUrl: HOOK } });
          await store.updateTask(
            task.id,
            { status: 'paused', pauseReason: 'user_request' },
            {
              expectedVersion: task.version,
              now: T0,
            },
          );
          await move(task.id, 'cancelled', T0);
          changes.push(['task.paused', task.id], ['task.cancelled', task.id]);
        }
        expect((await outbox()).map((m) => [m.event, m.taskId])).toEqual(changes);
      });

      it('counts attempts, keeps the first body, reschedules retries and settles delivered or failed', async () => {
        const [m1, m2, m3] = await threeMessages();
        if (m1 === undefined || m2 === undefined || m3 === undefined) throw new Error('missing messages');
        await store.recordWebhookAttempt(
          m1.id,
          {
            outcome: 'retry',
            body: 'first body',
            nextAttemptAt: T0 + 100,
            error: 'HTTP 503',
          },
          { now: T0 + 40 },
        );
        await expectRow(m1.id, {
          state: 'pending',
          attempts: 1,
          body: 'first body',
          last_error: 'HTTP 503',
          next_attempt_at: T0 + 100,
          finished_at: null,
        });
        // Rescheduled: m2 is now the oldest due, and m1 comes last.
        expect((await store.dueWebhooks({ now: T0 + 99, limit: 10 })).map((m) => m.id)).toEqual([
          m2.id,
          m3.id,
        ]);
        expect((await store.dueWebhooks({ now: T0 + 100, limit: 10 })).map((m) => m.id)).toEqual([
          m2.id,
          m3.id,
          m1.id,
        ]);
        expect(await store.nextWebhookAt()).toBe(T0 + 20);

        await store.recordWebhookAttempt(
          m1.id,
          {
            outcome: 'retry',
            body: 'second body',
            nextAttemptAt: T0 + 200,
            error: 'timeout',
          },
          { now: T0 + 100 },
        );
        const [again] = (await outbox()).filter((m) => m.id === m1.id);
        expect(again).toMatchObject({ body: 'first body', attempts: 2, nextAttemptAt: T0 + 200 });
        await store.recordWebhookAttempt(
          m1.id,
          { outcome: 'delivered', body: 'third body' },
          { now: T0 + 200 },
        );
        await expectRow(m1.id, {
          state: 'delivered',
          attempts: 3,
          body: 'first body',
          last_error: null,
          next_attempt_at: T0 + 200,
          finished_at: T0 + 200,
        });

        await store.recordWebhookAttempt(
          m2.id,
          { outcome: 'failed', body: 'b2', error: 'HTTP 410' },
          { now: T0 + 50 },
        );
        await expectRow(m2.id, { state: 'failed', attempts: 1, body: 'b2', last_error: 'HTTP 410' }, false);
        expect(await outbox()).toEqual([m3]);
        expect(await store.webhookCounts()).toEqual({ pending: 1, delivered: 1, failed: 1 });
        expect(await store.nextWebhookAt()).toBe(T0 + 30);

        // A settled message takes no more attempts, nor does an unknown one.
        for (const id of [m1.id, m2.id, 'msg_nope']) {
          await expectCode(store.recordWebhookAttempt(id, { outcome: 'delivered', body: 'x' }), 'NOT_FOUND');
        }
        await expectRow(m1.id, { attempts: 3 }, false);
        await store.recordWebhookAttempt(m3.id, { outcome: 'delivered', body: 'b3' });
        expect(await store.nextWebhookAt()).toBeNull();
        expect(await store.webhookCounts()).toEqual({ pending: 0, delivered: 2, failed: 1 });
      });

      it('counts nothing and schedules nothing in an empty outbox', async () => {
        expect(await store.webhookCounts()).toEqual({ pending: 0, delivered: 0, failed: 0 });
        expect(await store.nextWebhookAt()).toBeNull();
        expect(await store.dueWebhooks({ now: FAR, limit: 10 })).toEqual([]);
      });
    });

    describe('service store lifecycle', () => {
      it('rejects ABORTED with an aborted signal and STORE_CLOSED after close', async () => {
        const signal = AbortSignal.abort();
        const key = { id: 'key_1', keyHash: 'h', tenant: 't', role: 'member' as const };
        await expectCode(store.createApiKey(key, { signal }), 'ABORTED');
        await expectCode(store.dueWebhooks({ now: 0, limit: 1, signal }), 'ABORTED');
        expect(await store.listApiKeys()).toEqual([]);
        await store.close();
        await expectCode(store.createApiKey(key), 'STORE_CLOSED');
        await expectCode(store.findApiKey('h'), 'STORE_CLOSED');
        await expectCode(store.listApiKeys(), 'STORE_CLOSED');
        await expectCode(store.revokeApiKey('key_1'), 'STORE_CLOSED');
        await expectCode(store.revokedApiKeys(['key_1']), 'STORE_CLOSED');
        await expectCode(store.dueWebhooks({ now: 0, limit: 1 }), 'STORE_CLOSED');
        await expectCode(store.recordWebhookAttempt('m', { outcome: 'delivered', body: '' }), 'STORE_CLOSED');
        await expectCode(store.webhookCounts(), 'STORE_CLOSED');
        await expectCode(store.nextWebhookAt(), 'STORE_CLOSED');
      });
    });
  });
}
