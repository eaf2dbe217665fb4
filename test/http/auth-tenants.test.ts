import { beforeAll, describe, expect, it } from 'vitest';
import { newApiKey } from '../../src/service/index.ts';
import { payTool, useApiFixture } from './api-fixture.ts';
import type { ApiKey, ErrorBody } from './api-fixture.ts';

// Bearer keys and tenants over the real service parts: each key belongs to a tenant; another tenant's task or
// batch does not exist for it (404); only an admin key sees across tenants; what a key does is journaled and
// audited as `key:<id>`.

type Event = { source: string; type: string; data: Record<string, unknown> };

describe('HTTP auth and tenants', () => {
  const fx = useApiFixture('http-auth', {
    tools: [payTool()],
  });
  let a: ApiKey;
  let a2: ApiKey;
  let b: ApiKey;
  let admin: ApiKey;

  beforeAll(async () => {
    a = await fx.key('tenant-a');
    a2 = await fx.key('tenant-a');
    b = await fx.key('tenant-b');
    admin = await fx.key('ops', 'admin');
  });

  const get = (url: string, key?: ApiKey) => fx.app.inject({ url, headers: key?.headers ?? {} });
  const post = (url: string, payload: object, key: ApiKey, headers: Record<string, string> = {}) =>
    fx.app.inject({ method: 'POST', url, payload, headers: { ...key.headers, ...headers } });
  async function create(key: ApiKey, body: object): Promise<string> {
    const res = await post('/api/v1/tasks', body, key);
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ task_id: string }>().task_id;
  }
  async function until(id: string, ok: (v: Record<string, unknown>) => boolean) {
    for (let i = 0; i < 500; i++) {
      const view = (await get(`/api/v1/tasks/${id}`, admin)).json<Record<string, unknown>>();
      if (ok(view)) return view;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`task ${id} never got there`);
  }
  const events = async (id: string, key: ApiKey) =>
    (await get(`/api/v1/tasks/${id}/events?limit=1000`, key)).json<{ events: Event[] }>().events;

  it('answers a missing, malformed, unknown or revoked key with 401, the envelope and www-authenticate', async () => {
    const revoked = await fx.key('tenant-a');
    expect((await get('/api/v1/tasks', revoked)).statusCode).toBe(200);
    await fx.store.revokeApiKey(revoked.id);
    const cases: [string, Record<string, string>][] = [
      ['missing', {}],
      ['empty', { authorization: '' }],
      ['no scheme', { authorization: a.key }],
      ['basic', { authorization: `Basic ${Buffer.from(`x:${a.key}`).toString('base64')}` }],
      ['bearer without key', { authorization: 'Bearer ' }],
      ['two tokens', { authorization: `Bearer ${a.key} ${a.key}` }],
      ['unknown', { authorization: `Bearer ${newApiKey().key}` }],
      ['revoked', revoked.headers],
    ];
    for (const [what, headers] of cases) {
      for (const url of ['/api/v1/tasks', '/api/v1/tasks/task_x', '/api/v1/batches/batch_x']) {
        const res = await fx.app.inject({ url, headers });
        expect(res.statusCode, `${what} ${url}`).toBe(401);
        expect(res.headers['www-authenticate'], what).toBe('Bearer');
        const body = res.json<ErrorBody>();
        expect(body.error.code).toBe('UNAUTHORIZED');
        expect(typeof body.error.message).toBe('string');
        expect(body.error.details).toBeTypeOf('object');
      }
    }
    // A write without a key is refused before its body is even looked at, and creates nothing.
    const before = (await get('/api/v1/tasks?limit=1000', admin)).json<{ tasks: unknown[] }>().tasks.length;
    const write = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      payload: { code: 'return 1' },
    });
    expect(write.statusCode).toBe(401);
    expect((await get('/api/v1/tasks?limit=1000', admin)).json<{ tasks: unknown[] }>().tasks).toHaveLength(
      before,
    );
    // The scheme is case-insensitive.
    expect(
      (await get('/api/v1/tasks', { ...a, headers: { authorization: `bearer ${a.key}` } })).statusCode,
    ).toBe(200);
  });

  it('does not let a percent-encoded path skip the key check', async () => {
    // The router decodes `%61` to `a`; the hook must judge the route, not the raw URL.
    for (const url of ['/%61pi/v1/tasks', '/api/v1/%74asks', '/%61pi/v1/batches/x']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(401);
      expect(res.json<ErrorBody>().error.code).toBe('UNAUTHORIZED');
    }
  });

  it('serves /healthz and /readyz without a key', async () => {
    expect((await get('/healthz')).json()).toEqual({ status: 'ok' });
    expect((await get('/readyz')).json()).toEqual({ status: 'ready' });
    expect((await get('/healthz?x=1')).statusCode).toBe(200);
  });

  it("hides a tenant's tasks and batches from another tenant (404 everywhere) and from its list", async () => {
    const approval = await create(a, { code: 'return await tools.pay({ amount: 500 });' });
    const waiting = await create(a, { code: "return (await input.wait('who')).name;" });
    const paused = await until(approval, (v) => v.status === 'paused');
    await until(waiting, (v) => v.status === 'paused');
    const approvalId = (paused.pending_approvals as { id: string }[])[0]!.id;
    const batch = await post('/api/v1/tasks/batch', { tasks: [{ code: 'return 1' }] }, a);
    expect(batch.statusCode).toBe(201);
    const batchId = batch.json<{ batch_id: string }>().batch_id;

    const refused = [
      await get(`/api/v1/tasks/${approval}`, b),
      await get(`/api/v1/tasks/${approval}/events`, b),
      await get(`/api/v1/tasks/${approval}/stream`, b),
      await get(`/api/v1/batches/${batchId}`, b),
      await post(`/api/v1/tasks/${waiting}/control`, { action: 'cancel' }, b),
      await post(`/api/v1/tasks/${approval}/approvals/${approvalId}`, { decision: 'approve' }, b),
      await post(`/api/v1/tasks/${waiting}/input`, { name: 'who', value: { name: 'Eve' } }, b),
    ];
    for (const res of refused) {
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json<ErrorBody>().error.code).toBe('NOT_FOUND');
    }
    // B's attempts changed nothing.
    expect(await get(`/api/v1/tasks/${approval}`, a)).toMatchObject({ statusCode: 200 });
    expect((await get(`/api/v1/tasks/${waiting}`, a)).json()).toMatchObject({
      status: 'paused',
      pause_reason: 'awaiting_input',
      tenant: 'tenant-a',
    });
    // Another key of the same tenant sees them.
    expect((await get(`/api/v1/tasks/${approval}`, a2)).statusCode).toBe(200);
    expect((await get(`/api/v1/batches/${batchId}`, a2)).json()).toMatchObject({ tenant: 'tenant-a' });

    await create(b, { code: 'return 2' });
    const listOf = async (key: ApiKey, query = '') =>
      (await get(`/api/v1/tasks?limit=1000${query}`, key)).json<{
        tasks: { task_id: string; tenant: string }[];
      }>().tasks;
    const bList = await listOf(b);
    expect(bList.length).toBeGreaterThan(0);
    expect(bList.every((t) => t.tenant === 'tenant-b')).toBe(true);
    expect(bList.map((t) => t.task_id)).not.toContain(approval);
    expect((await listOf(b, '&status=paused')).every((t) => t.tenant === 'tenant-b')).toBe(true);
    expect(await listOf(b, '&tenant=tenant-b')).toEqual(bList);

    const forbidden = await get('/api/v1/tasks?tenant=tenant-a', b);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json<ErrorBody>().error).toMatchObject({
      code: 'FORBIDDEN',
      details: { field: 'tenant' },
    });

    // An admin key sees every tenant, and can name one; it can read and steer any task.
    const all = await listOf(admin);
    expect(new Set(all.map((t) => t.tenant))).toEqual(new Set(['tenant-a', 'tenant-b']));
    const onlyA = await listOf(admin, '&tenant=tenant-a');
    expect(onlyA.length).toBeGreaterThan(0);
    expect(onlyA.every((t) => t.tenant === 'tenant-a')).toBe(true);
    expect(await listOf(admin, '&tenant=nobody')).toEqual([]);
    expect((await get(`/api/v1/batches/${batchId}`, admin)).statusCode).toBe(200);
    expect((await post(`/api/v1/tasks/${waiting}/control`, { action: 'cancel' }, admin)).statusCode).toBe(
      200,
    );
  });

  it('filters the list by session_id within the tenant', async () => {
    const s1 = await create(a, { code: 'return 1', session_id: 'chat-1' });
    const s2 = await create(a, { code: 'return 2', session_id: 'chat-1' });
    await create(a, { code: 'return 3', session_id: 'chat-2' });
    const other = await create(b, { code: 'return 4', session_id: 'chat-1' });
    const ids = async (key: ApiKey) =>
      (await get('/api/v1/tasks?session_id=chat-1', key))
        .json<{ tasks: { task_id: string; session_id: string }[] }>()
        .tasks.map((t) => t.task_id);
    expect(await ids(a)).toEqual([s1, s2]);
    expect(await ids(b)).toEqual([other]);
    expect(await ids(admin)).toEqual([s1, s2, other]);
    expect((await get('/api/v1/tasks?session_id=no%20spaces!', a)).statusCode).toBe(200);
  });

  it('journals and audits what a key does as key:<id>', async () => {
    const paying = await create(a, { code: 'return await tools.pay({ amount: 700 });' });
    const paused = await until(paying, (v) => v.status === 'paused');
    const approvalId = (paused.pending_approvals as { id: string }[])[0]!.id;
    const approved = await post(
      `/api/v1/tasks/${paying}/approvals/${approvalId}`,
      { decision: 'approve' },
      a2,
    );
    expect(approved.statusCode).toBe(200);
    await until(paying, (v) => v.status === 'succeeded');
    const payEvents = await events(paying, a);
    expect(
      payEvents.find((e) => e.source === 'journal' && e.type === 'approval_decision')?.data,
    ).toMatchObject({
      actor: `key:${a2.id}`,
      decision: 'approve',
    });
    const audit = payEvents.filter((e) => e.source === 'audit');
    expect(audit[0]).toMatchObject({ type: 'created', data: { actor: `key:${a.id}`, tenant: 'tenant-a' } });
    expect(audit.find((e) => e.data.from === 'paused' && e.data.to === 'pending')?.data).toMatchObject({
      actor: `key:${a2.id}`,
    });

    const waiting = await create(a, { code: "return (await input.wait('who')).name;" });
    await until(waiting, (v) => v.status === 'paused');
    const cancel = await post(`/api/v1/tasks/${waiting}/control`, { action: 'cancel', reason: 'no' }, a);
    expect(cancel.json()).toMatchObject({ status: 'cancelled' });
    const cancelEvents = await events(waiting, a);
    const control = cancelEvents.filter((e) => e.source === 'journal' && e.type === 'control');
    expect(control.find((e) => e.data.action === 'cancel')?.data).toMatchObject({
      action: 'cancel',
      actor: `key:${a.id}`,
      reason: 'no',
    });
    expect(
      cancelEvents.find((e) => e.source === 'audit' && e.type === 'status' && e.data.to === 'cancelled')
        ?.data,
    ).toMatchObject({ from: 'paused', actor: `key:${a.id}` });
    expect((await get(`/api/v1/tasks/${waiting}`, a)).json()).toMatchObject({
      error: { code: 'CANCELLED', message: `cancelled by key:${a.id}: no` },
    });
  });

  it('keeps Idempotency-Key per tenant: one key from two tenants makes two tasks', async () => {
    const send = (key: ApiKey) =>
      post('/api/v1/tasks', { code: 'return 7' }, key, { 'idempotency-key': 'order-1' });
    const fromA = await send(a);
    const fromB = await send(b);
    expect(fromA.statusCode).toBe(201);
    expect(fromB.statusCode).toBe(201);
    const idA = fromA.json<{ task_id: string }>().task_id;
    const idB = fromB.json<{ task_id: string }>().task_id;
    expect(idA).not.toBe(idB);
    // Within a tenant it is one task, whichever of its keys repeats it.
    expect((await send(a2)).json()).toEqual(fromA.json());
    expect((await get(`/api/v1/tasks/${idA}`, a)).json()).toMatchObject({ tenant: 'tenant-a' });
    expect((await get(`/api/v1/tasks/${idB}`, b)).json()).toMatchObject({ tenant: 'tenant-b' });
    expect((await get(`/api/v1/tasks/${idA}`, b)).statusCode).toBe(404);
  });
});
