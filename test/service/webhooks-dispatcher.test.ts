import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { encodeValue } from '../../src/codec/index.ts';
import {
  createWebhookDispatcher,
  newWebhookSecret,
  verifyWebhook,
} from '../../src/service/webhooks/index.ts';
import type {
  BatchWebhookData,
  TaskWebhookData,
  WebhookDispatcher,
  WebhookDispatcherOptions,
  WebhookPayload,
} from '../../src/service/webhooks/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import type { SqliteTaskStore } from '../../src/store/index.ts';
import { codeInput } from '../conformance/task-store-conformance.ts';
import { openForTampering } from '../store/tamper.ts';
import { startReceiver } from './webhook-receiver.ts';
import type { Reply } from './webhook-receiver.ts';

const SECRET = newWebhookSecret();
let dir = '';
let count = 0;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'codecall-webhooks-'));
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function openStore(path = join(dir, `store-${++count}.db`)): Promise<SqliteTaskStore> {
  const store = await createSqliteTaskStore({ path });
  cleanups.push(() => store.close());
  return store;
}

async function receiver(reply?: (n: number) => Reply): Promise<Awaited<ReturnType<typeof startReceiver>>> {
  const r = await startReceiver(reply);
  cleanups.push(() => r.close());
  return r;
}

function dispatcher(
  store: SqliteTaskStore,
  options: Partial<WebhookDispatcherOptions> = {},
): { dispatcher: WebhookDispatcher; warnings: { details: Record<string, unknown>; message: string }[] } {
  const warnings: { details: Record<string, unknown>; message: string }[] = [];
  const d = createWebhookDispatcher({
    store,
    secret: SECRET,
    allowPrivate: true,
    baseDelayMs: 10,
    maxDelayMs: 40,
    pollMs: 20,
    timeoutMs: 2000,
    random: () => 1,
    logger: { warn: (details, message) => warnings.push({ details, message }) },
    ...options,
  });
  cleanups.push(() => d.close());
  return { dispatcher: d, warnings };
}

/** A task with a callback that runs and succeeds: the trigger puts `task.succeeded` in the outbox. */
async function succeededTask(
  store: SqliteTaskStore,
  callbackUrl: string,
  result: unknown = 42,
): Promise<string> {
  const task = await store.createTask(
    { ...codeInput(), metadata: { order: 'A-17' } },
    { attributes: { callbackUrl, sessionId: 'sess-1' } },
  );
  await store.claimTask('tester', { leaseMs: 60_000, taskId: task.id });
  const running = await store.getTask(task.id);
  await store.updateTask(
    task.id,
    { status: 'succeeded', result: encodeValue(result) },
    { expectedVersion: running?.version ?? -1 },
  );
  return task.id;
}

async function until(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await delay(5);
  }
}

describe('webhook dispatcher', () => {
  it('delivers a signed task.succeeded with the task view of its result', async () => {
    const store = await openStore();
    const r = await receiver();
    const taskId = await succeededTask(store, r.url, new Map([['when', new Date(0)]]));
    const [message] = await store.dueWebhooks({ now: Date.now(), limit: 10 });
    const { dispatcher: d } = dispatcher(store);

    expect(await d.deliverDue()).toBe(1);
    expect(r.received).toHaveLength(1);
    const got = r.received[0]!;
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['webhook-id']).toBe(message?.id);
    expect(verifyWebhook(SECRET, got.headers, got.body)).toBe(true);
    const payload = JSON.parse(got.body) as WebhookPayload;
    expect(payload.type).toBe('task.succeeded');
    expect(payload.timestamp).toBe(new Date(message!.createdAt).toISOString());
    expect(payload.data).toEqual({
      task_id: taskId,
      status: 'succeeded',
      pause_reason: null,
      error: null,
      output: { when: '1970-01-01T00:00:00.000Z' },
      pending_approvals: [],
      session_id: 'sess-1',
      batch_id: null,
      metadata: { order: 'A-17' },
      corrupt: null,
    } satisfies TaskWebhookData);
    expect(await store.webhookCounts()).toEqual({ pending: 0, delivered: 1, failed: 0 });
    expect(await d.deliverDue()).toBe(0);
  });

  it('takes a delivery timeout and a poll past one Node timer (2^31-1 ms): delivers, no timer overflows', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const store = await openStore();
      const r = await receiver();
      await succeededTask(store, r.url);
      // AbortSignal.timeout threw past 2^32-1 ms; a poll of 2^40 ms ran every 1 ms.
      const { dispatcher: d } = dispatcher(store, { timeoutMs: 2 ** 33, pollMs: 2 ** 40 });
      d.start();
      await until(async () => (await store.webhookCounts()).delivered === 1);
      await delay(100);
      expect(r.received).toHaveLength(1);
      expect(warnings.filter((w) => w.name === 'TimeoutOverflowWarning').map((w) => w.message)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('sends task.failed with the error and no output', async () => {
    const store = await openStore();
    const r = await receiver();
    const task = await store.createTask(codeInput(), { attributes: { callbackUrl: r.url } });
    await store.updateTask(
      task.id,
      { status: 'failed', error: { code: 'TOOL_ERROR', message: 'boom' } },
      { expectedVersion: task.version },
    );
    const { dispatcher: d } = dispatcher(store);
    expect(await d.deliverDue()).toBe(1);
    const payload = JSON.parse(r.received[0]?.body ?? '') as WebhookPayload;
    expect(payload.type).toBe('task.failed');
    expect(payload.data).toMatchObject({
      task_id: task.id,
      status: 'failed',
      error: { code: 'TOOL_ERROR', message: 'boom' },
      output: null,
      metadata: null,
    });
  });

  it('retries after a 500 and a redirect (not followed), with the same id and body bytes', async () => {
    const store = await openStore();
    const r = await receiver((n) =>
      n === 0 ? 500 : n === 1 ? { status: 302, location: '/elsewhere' } : 200,
    );
    await succeededTask(store, r.url);
    const { dispatcher: d, warnings } = dispatcher(store);
    d.start();
    await until(async () => (await store.webhookCounts()).delivered === 1);

    expect(r.received.map((x) => x.path)).toEqual(['/hook', '/hook', '/hook']);
    const [first, second, third] = r.received;
    expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(1);
    expect(second?.body).toBe(first?.body);
    expect(third?.body).toBe(first?.body);
    for (const x of r.received) expect(verifyWebhook(SECRET, x.headers, x.body)).toBe(true);
    expect(warnings.map((w) => w.details.error)).toEqual([
      'HTTP 500',
      'HTTP 302: redirect to /elsewhere not followed',
    ]);
  });

  it('retries an attempt that times out', async () => {
    const store = await openStore();
    const r = await receiver((n) => (n === 0 ? 'hang' : 204));
    await succeededTask(store, r.url);
    const { dispatcher: d, warnings } = dispatcher(store, { timeoutMs: 100 });
    d.start();
    await until(async () => (await store.webhookCounts()).delivered === 1);
    expect(r.received).toHaveLength(2);
    expect(warnings[0]?.details.error).toBe('timed out after 100 ms');
  });

  it('stops at a 410: the receiver unsubscribed', async () => {
    const store = await openStore();
    const r = await receiver(() => 410);
    await succeededTask(store, r.url);
    const { dispatcher: d, warnings } = dispatcher(store);
    expect(await d.deliverDue()).toBe(1);
    expect(await store.webhookCounts()).toEqual({ pending: 0, delivered: 0, failed: 1 });
    expect(await store.nextWebhookAt()).toBeNull();
    expect(r.received).toHaveLength(1);
    expect(warnings[0]?.details).toMatchObject({
      outcome: 'failed',
      error: 'HTTP 410: the receiver unsubscribed',
    });
  });

  it('gives a message up once it is older than maxAgeMs', async () => {
    const store = await openStore();
    const r = await receiver(() => 503);
    await succeededTask(store, r.url);
    const { dispatcher: d, warnings } = dispatcher(store, { maxAgeMs: 80 });
    d.start();
    await until(async () => (await store.webhookCounts()).failed === 1);
    expect(r.received.length).toBeGreaterThanOrEqual(2);
    expect(warnings.at(-1)?.details.error).toMatch(/^gave up after \d+ attempts over 80 ms: HTTP 503$/);
  });

  it('leaves an attempt cut short by close() pending, and a new dispatcher delivers it (restart)', async () => {
    const path = join(dir, `restart-${++count}.db`);
    const first = await createSqliteTaskStore({ path });
    const r = await receiver((n) => (n === 0 ? 'hang' : 204));
    await succeededTask(first, r.url);
    const { dispatcher: d1 } = dispatcher(first, { timeoutMs: 60_000 });
    d1.start();
    await r.arrived(1);
    await d1.close();
    const [left] = await first.dueWebhooks({ now: Date.now(), limit: 10 });
    expect(left).toMatchObject({ attempts: 0, body: null });
    await first.close();

    const second = await openStore(path);
    const { dispatcher: d2 } = dispatcher(second);
    expect(await d2.deliverDue()).toBe(1);
    expect(await second.webhookCounts()).toEqual({ pending: 0, delivered: 1, failed: 0 });
    expect(r.received).toHaveLength(2);
    expect(r.received[1]?.headers['webhook-id']).toBe(r.received[0]?.headers['webhook-id']);
    expect(r.received[1]?.body).toBe(r.received[0]?.body);
  });

  it("sends each message once with two dispatchers on one database (claims), and takes over a dead one's", async () => {
    const path = join(dir, `shared-${++count}.db`);
    const a = await openStore(path);
    const b = await openStore(path);
    const r = await receiver();
    for (let i = 0; i < 20; i++) await succeededTask(a, r.url, i);
    // A dispatcher that died holding a claim: its message waits for the claim to expire, then goes out.
    const leaseMs = 1000;
    const held = await a.dueWebhooks({ now: Date.now(), limit: 1, claim: { owner: 'dead', leaseMs } });
    const expiresAt = Date.now() + leaseMs;
    expect(held).toHaveLength(1);
    const { dispatcher: d1 } = dispatcher(a, { concurrency: 4 });
    const { dispatcher: d2 } = dispatcher(b, { concurrency: 4 });
    d1.start();
    d2.start();
    const sent = (): string[] => r.received.map((x) => String(x.headers['webhook-id']));
    // Until its claim expires the held message stays (however fast or slow the others go out).
    while (Date.now() < expiresAt - 50) {
      expect(sent()).not.toContain(held[0]?.id);
      await delay(20);
    }
    await until(() => r.received.length >= 20, 5000);
    const ids = sent();
    expect(new Set(ids).size).toBe(20);
    expect(ids).toContain(held[0]?.id);
    // The receiver has the last message before its dispatcher records the delivery.
    await until(async () => (await a.webhookCounts()).delivered === 20, 10_000);
    expect(await a.webhookCounts()).toEqual({ pending: 0, delivered: 20, failed: 0 });
  });

  it('fails a private target at once when allowPrivate is false', async () => {
    const store = await openStore();
    const r = await receiver();
    await succeededTask(store, r.url);
    const { dispatcher: d, warnings } = dispatcher(store, { allowPrivate: false });
    expect(await d.deliverDue()).toBe(1);
    expect(r.received).toHaveLength(0);
    expect(await store.webhookCounts()).toEqual({ pending: 0, delivered: 0, failed: 1 });
    expect(warnings[0]?.details.error).toMatch(/127\.0\.0\.1 is a loopback address/);
  });

  it('sends task.paused with the pending approvals, and batch.completed with the final counts', async () => {
    const store = await openStore();
    const r = await receiver();
    const task = await store.createTask(codeInput(), { attributes: { callbackUrl: r.url } });
    const lease = await store.claimTask('tester', { leaseMs: 60_000, taskId: task.id });
    const args = encodeValue({ amount: 10n });
    await store.appendJournal(
      task.id,
      [{ type: 'approval_request', data: { approval_id: 'ap-1', call_id: 'c-1', tool: 'pay.send', args } }],
      { fencingToken: lease!.fencingToken },
    );
    await store.updateTask(
      task.id,
      { status: 'paused', pauseReason: 'approval_required' },
      { fencingToken: lease!.fencingToken },
    );
    const { batch, tasks } = await store.createBatch([{ input: codeInput() }, { input: codeInput() }], {
      tenant: 'default',
      callbackUrl: `${r.url}?batch=1`,
    });
    for (const t of tasks)
      await store.updateTask(t.id, { status: 'cancelled' }, { expectedVersion: t.version });

    const { dispatcher: d } = dispatcher(store);
    expect(await d.deliverDue()).toBe(2);
    const payloads = r.received.map((x) => JSON.parse(x.body) as WebhookPayload);
    const paused = payloads.find((p) => p.type === 'task.paused');
    expect(paused?.data).toMatchObject({
      task_id: task.id,
      status: 'paused',
      pause_reason: 'approval_required',
      pending_approvals: [{ id: 'ap-1', tool: 'pay.send', arguments: { amount: '10' } }],
    });
    const completed = payloads.find((p) => p.type === 'batch.completed');
    expect(completed?.data).toEqual({
      batch_id: batch.id,
      size: 2,
      counts: { pending: 0, running: 0, paused: 0, succeeded: 0, failed: 0, cancelled: 2 },
      task_ids: tasks.map((t) => t.id),
    } satisfies BatchWebhookData);
    // Each went to its own URL: the task's callback and the batch's.
    expect(r.received.map((x) => [x.path, (JSON.parse(x.body) as WebhookPayload).type]).sort()).toEqual([
      ['/hook', 'task.paused'],
      ['/hook?batch=1', 'batch.completed'],
    ]);
  });

  it.each([
    [
      'its journal entry edited',
      `UPDATE journal SET data = '{"x":1,' || substr(data, 2) WHERE task_id = ? AND seq = 2`,
    ],
    ['its row garbled', `UPDATE tasks SET input = '{' WHERE id = ?`],
  ])('sends task.paused of a task with %s, marked corrupt, instead of failing it', async (_what, sql) => {
    const path = join(dir, `corrupt-${++count}.db`);
    const store = await openStore(path);
    const r = await receiver();
    const task = await store.createTask(codeInput(), { attributes: { callbackUrl: r.url } });
    const lease = await store.claimTask('tester', { leaseMs: 60_000, taskId: task.id });
    const args = encodeValue({ amount: 10 });
    await store.appendJournal(
      task.id,
      [{ type: 'approval_request', data: { approval_id: 'ap-1', call_id: 'c-1', tool: 'pay.send', args } }],
      { fencingToken: lease!.fencingToken },
    );
    await store.updateTask(
      task.id,
      { status: 'paused', pauseReason: 'approval_required' },
      { fencingToken: lease!.fencingToken },
    );
    const raw = openForTampering(path);
    raw.prepare(sql).run(task.id);
    raw.close();
    const { dispatcher: d } = dispatcher(store);
    expect(await d.deliverDue()).toBe(1);
    expect(await store.webhookCounts()).toEqual({ pending: 0, delivered: 1, failed: 0 });
    const payload = JSON.parse(r.received[0]?.body ?? '') as WebhookPayload;
    expect(payload.data).toMatchObject({
      task_id: task.id,
      status: 'paused',
      pending_approvals: [],
      corrupt: { code: 'CHECKPOINT_CORRUPT' },
    });
  });

  it('refuses to start without a valid secret', async () => {
    const store = await openStore();
    expect(() => createWebhookDispatcher({ store, secret: '' })).toThrow(/whsec_/);
  });
});
