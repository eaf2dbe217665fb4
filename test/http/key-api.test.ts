import { describe, expect, it } from 'vitest';
import { useApiFixture } from './api-fixture.ts';

// /api/v1/keys: admin keys create, list and revoke keys; a created key works at once, a revoked one never again.

describe('HTTP API keys', () => {
  const fx = useApiFixture('http-keys', { start: false });

  it('lets an admin create a member key, shown once, that sees only its tenant', async () => {
    const admin = await fx.key('ops', 'admin');
    const created = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: admin.headers,
      payload: { tenant: 'acme', name: 'ci' },
    });
    expect(created.statusCode).toBe(201);
    const body = created.json<{ key_id: string; key: string; tenant: string; role: string; name: string }>();
    expect(body).toMatchObject({ tenant: 'acme', role: 'member', name: 'ci' });
    expect(body.key).toMatch(/^cc_/);
    const headers = { authorization: `Bearer ${body.key}` };
    const task = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers,
      payload: { code: 'return 1' },
    });
    expect(task.statusCode).toBe(201);
    const view = await fx.app.inject({
      url: `/api/v1/tasks/${task.json<{ task_id: string }>().task_id}`,
      headers,
    });
    expect(view.json()).toMatchObject({ tenant: 'acme' });

    // Listing shows no secret and no hash.
    const list = await fx.app.inject({ url: '/api/v1/keys', headers: admin.headers });
    expect(list.statusCode).toBe(200);
    const text = list.body;
    expect(text).not.toContain(body.key);
    expect(text).not.toContain('hash');
    expect(list.json<{ keys: { key_id: string }[] }>().keys.map((k) => k.key_id)).toContain(body.key_id);

    // Revoked: 401 from then on.
    const revoked = await fx.app.inject({
      method: 'DELETE',
      url: `/api/v1/keys/${body.key_id}`,
      headers: admin.headers,
    });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json<{ revoked_at: string | null }>().revoked_at).not.toBeNull();
    expect((await fx.app.inject({ url: '/api/v1/tasks', headers })).statusCode).toBe(401);
  });

  it('refuses members (403), bad bodies (400), unknown ids (404) and an admin revoking itself (409)', async () => {
    const admin = await fx.key('ops', 'admin');
    const member = await fx.key('acme');
    for (const [method, url] of [
      ['POST', '/api/v1/keys'],
      ['GET', '/api/v1/keys'],
      ['DELETE', `/api/v1/keys/${admin.id}`],
    ] as const) {
      const res = await fx.app.inject({
        method,
        url,
        headers: member.headers,
        ...(method === 'POST' ? { payload: { tenant: 'acme', role: 'admin' } } : {}),
      });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ error: { code: 'FORBIDDEN' } });
    }
    const bad = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: admin.headers,
      payload: { tenant: 'no spaces' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: { code: 'BAD_REQUEST', details: { field: 'tenant' } } });
    const unknown = await fx.app.inject({
      method: 'DELETE',
      url: '/api/v1/keys/key_nope',
      headers: admin.headers,
    });
    expect(unknown.statusCode).toBe(404);
    const itself = await fx.app.inject({
      method: 'DELETE',
      url: `/api/v1/keys/${admin.id}`,
      headers: admin.headers,
    });
    expect(itself.statusCode).toBe(409);
    expect((await fx.app.inject({ url: '/api/v1/keys', headers: admin.headers })).statusCode).toBe(200);
  });
});
