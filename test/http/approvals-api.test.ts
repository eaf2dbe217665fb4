import { beforeAll, describe, expect, it } from 'vitest';
import { payTool, useApiFixture } from './api-fixture.ts';
import { buildServer } from '../../src/http/index.ts';
import type { ApiKey, ErrorBody } from './api-fixture.ts';

// The approvals inbox (GET /api/v1/approvals) and deciding several approvals of one task at once
// (POST /api/v1/tasks/{id}/approvals), over the real runtime, store and key auth.

interface InboxItem {
  task_id: string;
  approval_id: string;
  tool: string;
  arguments: unknown;
  requested_at: string;
  tenant: string;
  session_id: string | null;
}

describe('approvals inbox and batch decisions', () => {
  const fx = useApiFixture('http-approvals', {
    tools: [payTool()],
  });
  let a: ApiKey;
  let b: ApiKey;
  let admin: ApiKey;
  beforeAll(async () => {
    a = await fx.key('tenant-a');
    b = await fx.key('tenant-b');
    admin = await fx.key('ops', 'admin');
  });

  const get = (url: string, key: ApiKey) => fx.app.inject({ url, headers: key.headers });
  const post = (url: string, payload: object, key: ApiKey) =>
    fx.app.inject({ method: 'POST', url, payload, headers: key.headers });
  async function create(key: ApiKey, body: object): Promise<string> {
    const res = await post('/api/v1/tasks', body, key);
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ task_id: string }>().task_id;
  }
  async function until(id: string, status: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 1000; i++) {
      const view = await fx.runtime.get(id);
      if (view?.status === status) return view as unknown as Record<string, unknown>;
      await new Promise((r) => setTimeout(r, 10));
    }
    const view = await fx.runtime.get(id);
    throw new Error(`task ${id} never became ${status}: ${JSON.stringify([view?.status, view?.error])}`);
  }
  const inbox = async (key: ApiKey, query = ''): Promise<InboxItem[]> => {
    const res = await get(`/api/v1/approvals${query}`, key);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ approvals: InboxItem[] }>().approvals;
  };

  it("lists every pending approval of the caller's tenant with the exact arguments, and no other tenant's", async () => {
    const two = await create(a, {
      code: 'return await Promise.all([tools.pay({ amount: 200 }), tools.pay({ amount: 300, note: "x" })]);',
      session_id: 's-1',
    });
    const other = await create(b, { code: 'return await tools.pay({ amount: 999 });' });
    await until(two, 'paused');
    await until(other, 'paused');
    const mine = (await inbox(a)).filter((x) => x.task_id === two);
    expect(mine.map((x) => x.arguments)).toEqual([{ amount: 200 }, { amount: 300, note: 'x' }]);
    expect(mine[0]).toMatchObject({ tool: 'tools.pay', tenant: 'tenant-a', session_id: 's-1' });
    expect(Date.parse(mine[0]?.requested_at ?? '')).not.toBeNaN();
    expect((await inbox(a)).some((x) => x.task_id === other)).toBe(false);
    expect((await inbox(b)).map((x) => x.task_id)).toEqual([other]);
    // An admin sees every tenant, or the one it names; a member may not name another.
    const all = (await inbox(admin)).map((x) => x.task_id);
    expect(all).toEqual(expect.arrayContaining([two, other]));
    expect((await inbox(admin, '?tenant=tenant-b')).map((x) => x.task_id)).toEqual([other]);
    const refused = await get('/api/v1/approvals?tenant=tenant-b', a);
    expect(refused.statusCode).toBe(403);
    expect(refused.json<ErrorBody>().error.code).toBe('FORBIDDEN');

    // Approve all of one task's requests in one decision: the task runs once more and succeeds.
    const decided = await post(`/api/v1/tasks/${two}/approvals`, { decision: 'approve' }, a);
    expect(decided.statusCode, decided.body).toBe(200);
    const done = await until(two, 'succeeded');
    expect(done.result).toMatchObject({ output: ['paid 200', 'paid 300'] });
    const journal = await fx.store.readJournal(two);
    const decisions = journal.filter((e) => e.type === 'approval_decision');
    expect(decisions.map((e) => e.data.decision)).toEqual(['approve', 'approve']);
    expect((await inbox(a)).some((x) => x.task_id === two)).toBe(false);
  });

  it('pages the inbox by waiting tasks, oldest first, without reading their programs whole', async () => {
    const c = await fx.key('tenant-c');
    // One task with a big program (its list form is what the inbox reads) and two small ones.
    const big = `return await tools.pay({ amount: 101 });\n// ${'p'.repeat(20_000)}`;
    const ids = [
      await create(c, { code: big }),
      await create(c, {
        code: 'return await Promise.all([tools.pay({ amount: 102 }), tools.pay({ amount: 103 })]);',
      }),
      await create(c, { code: 'return await tools.pay({ amount: 104 });' }),
    ];
    for (const id of ids) await until(id, 'paused');
    const page = async (query: string) => {
      const res = await get(`/api/v1/approvals${query}`, c);
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ approvals: InboxItem[]; next_cursor: string | null }>();
    };
    const first = await page('?limit=2');
    expect(first.approvals.map((x) => [x.task_id, x.arguments])).toEqual([
      [ids[0], { amount: 101 }],
      [ids[1], { amount: 102 }],
      [ids[1], { amount: 103 }],
    ]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await page(`?limit=2&cursor=${encodeURIComponent(first.next_cursor ?? '')}`);
    expect(second.approvals.map((x) => [x.task_id, x.arguments])).toEqual([[ids[2], { amount: 104 }]]);
    expect(second.next_cursor).toBeNull();
    // The default page holds them all; a bad limit is a 400.
    expect((await page('')).approvals).toHaveLength(4);
    expect((await get('/api/v1/approvals?limit=5000', c)).statusCode).toBe(400);
    expect((await get('/api/v1/approvals?limit=abc', c)).statusCode).toBe(400);
  });

  it('rejects named approvals with a reason, which the program sees as TOOL_REJECTED', async () => {
    const id = await create(a, {
      code: 'try { await tools.pay({ amount: 500 }); return "paid"; } catch (e) { return [e.code, e.message]; }',
    });
    await until(id, 'paused');
    const [item] = (await inbox(a)).filter((x) => x.task_id === id);
    const res = await post(
      `/api/v1/tasks/${id}/approvals`,
      { decision: 'reject', reason: 'too much', approval_ids: [item?.approval_id ?? ''] },
      a,
    );
    expect(res.statusCode, res.body).toBe(200);
    const done = await until(id, 'succeeded');
    const [code, message] = (done.result as { output: [string, string] }).output;
    expect(code).toBe('TOOL_REJECTED');
    expect(message).toContain('too much');
  });

  it("answers 404 for another tenant's task and 409 for a task that waits for no approval", async () => {
    const id = await create(b, { code: 'return await tools.pay({ amount: 700 });' });
    await until(id, 'paused');
    const hidden = await post(`/api/v1/tasks/${id}/approvals`, { decision: 'approve' }, a);
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json<ErrorBody>().error.code).toBe('NOT_FOUND');
    const done = await create(a, { code: 'return 1;' });
    await until(done, 'succeeded');
    const conflict = await post(`/api/v1/tasks/${done}/approvals`, { decision: 'approve' }, a);
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json<ErrorBody>().error).toMatchObject({
      code: 'ILLEGAL_TRANSITION',
      details: { status: 'succeeded' },
    });
    const unknown = await post(
      `/api/v1/tasks/${id}/approvals`,
      { decision: 'approve', approval_ids: ['x'] },
      b,
    );
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json<ErrorBody>().error.code).toBe('INVALID_ARGUMENT');
    const bad = await post(`/api/v1/tasks/${id}/approvals`, { decision: 'maybe' }, b);
    expect(bad.statusCode).toBe(400);
    expect(bad.json<ErrorBody>().error).toMatchObject({
      code: 'BAD_REQUEST',
      details: { field: 'decision' },
    });
  });

  it('GET /api/v1/me names the key, and its code and instruction are in the view', async () => {
    const me = await get('/api/v1/me', a);
    expect(me.json()).toEqual({
      tenant: 'tenant-a',
      role: 'member',
      key_id: a.id,
      actor: `key:${a.id}`,
      auth: 'key',
    });
    const unauth = await fx.app.inject({ url: '/api/v1/me' });
    expect(unauth.statusCode).toBe(401);
    // A server that checks no keys says so (the console shows it): any caller is the anonymous admin.
    const open = buildServer({ runtime: fx.runtime, store: fx.store });
    try {
      expect((await open.inject({ url: '/api/v1/me' })).json()).toMatchObject({
        tenant: 'default',
        role: 'admin',
        key_id: null,
        auth: 'none',
      });
    } finally {
      await open.close();
    }
    const id = await create(a, { code: 'return 40 + 2;' });
    const view = (await get(`/api/v1/tasks/${id}`, a)).json<{ code: string; instruction: null }>();
    expect(view).toMatchObject({ code: 'return 40 + 2;', instruction: null });
  });
});
