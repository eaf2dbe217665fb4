import { beforeAll, describe, expect, it } from 'vitest';
import { useApiFixture } from './api-fixture.ts';
import type { ErrorBody } from './api-fixture.ts';

// A tenant past its share of the event loop while another tenant is active is held or refused 429
// TOO_MANY_REQUESTS with Retry-After (ADR 0039); alone it is never bound, and the other tenant is never held by it.
// Real HTTP on loopback, with tiny shares and bursts.

describe('fair share of the event loop between tenants', () => {
  const fx = useApiFixture('http-request-share', {
    start: false,
    requestShare: { share: 0.01, burstMs: 50, maxHeld: 0, maxWaitMs: 60_000, windowMs: 60_000 },
  });
  let base = '';
  beforeAll(async () => {
    base = await fx.app.listen({ port: 0, host: '127.0.0.1' });
  });
  const list = (headers: Record<string, string>): Promise<Response> =>
    fetch(`${base}/api/v1/tasks?limit=100`, { headers });

  it('never bounds a tenant alone, refuses it past its share once another asks, and leaves the other be', async () => {
    const b = await fx.key('t-share-b');
    const a = await fx.key('t-share-a');
    // Alone (probes without a key are no tenant), b takes far more than its 50 ms burst and is never refused.
    for (let i = 0; i < 200; i++) {
      expect((await list(b.headers)).status).toBe(200);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    }
    expect((await list(a.headers)).status).toBe(200);
    // b's bucket was forgiven while it was alone: it has its burst (50 ms of the loop) again, then is refused.
    const submit = (): Promise<Response> =>
      fetch(`${base}/api/v1/tasks`, {
        method: 'POST',
        headers: { ...b.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ code: 'return 1' }),
      });
    let created = 0;
    let refused = await submit();
    while (refused.status === 201 && created < 5000) {
      created++;
      await refused.body?.cancel();
      refused = await submit();
    }
    expect(created).toBeGreaterThan(0);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await refused.json()) as ErrorBody;
    expect(body.error.code).toBe('TOO_MANY_REQUESTS');
    expect(body.error.details.tenant).toBe('t-share-b');
    expect(body.error.message).toMatch(/share of the server/);
    // The other tenant goes on, and the refused request created nothing.
    expect((await list(a.headers)).status).toBe(200);
    const stored = await fx.store.listTasks({ tenant: 't-share-b', limit: 1000 });
    expect(stored.tasks).toHaveLength(created);
  });
});

describe('requests held for their share', () => {
  const fx = useApiFixture('http-request-share-held', {
    start: false,
    metrics: true,
    // Any request (at least 0.05 ms of the loop) puts a tenant behind by the most it may be: maxWaitMs of refill.
    requestShare: { share: 0.00005, burstMs: 0, maxHeld: 1, maxWaitMs: 1000, windowMs: 60_000 },
  });
  let base = '';
  beforeAll(async () => {
    base = await fx.app.listen({ port: 0, host: '127.0.0.1' });
  });
  const list = (headers: Record<string, string>): Promise<Response> =>
    fetch(`${base}/api/v1/tasks?limit=100`, { headers });

  it('holds one request of a tenant behind, refuses the next ones while it waits, then answers it', async () => {
    const a = await fx.key('t-held-a');
    const b = await fx.key('t-held-b');
    expect((await list(a.headers)).status).toBe(200);
    expect((await list(b.headers)).status).toBe(200); // puts b behind: 1 s of refill
    // Three at once: whichever arrives first is held and then answered, the other two are refused meanwhile.
    const three = Promise.all([list(b.headers), list(b.headers), list(b.headers)]);
    await new Promise((r) => setTimeout(r, 300));
    // Tenant a is not held behind b.
    expect((await list(a.headers)).status).toBe(200);
    const answers = await three;
    expect(answers.map((r) => r.status).sort()).toEqual([200, 429, 429]);
    for (const res of answers.filter((r) => r.status === 429)) {
      const body = (await res.json()) as ErrorBody;
      expect(body.error.code).toBe('TOO_MANY_REQUESTS');
      expect(body.error.message).toMatch(/requests waiting/);
    }
    // The one held is counted, with how long it waited.
    const text =
      (await fx.metrics?.registry.getSingleMetricAsString('codecall_http_request_held_seconds')) ?? '';
    expect(text).toMatch(/^codecall_http_request_held_seconds_count 1$/m);
  });
});

describe('a held request of a revoked key', () => {
  // Held for up to a minute: an answer within the test's timeout can only be the revocation's.
  const fx = useApiFixture('http-request-share-revoked', {
    start: false,
    requestShare: { share: 0.000001, burstMs: 0, maxHeld: 1, maxWaitMs: 60_000, windowMs: 60_000 },
  });
  let base = '';
  beforeAll(async () => {
    base = await fx.app.listen({ port: 0, host: '127.0.0.1' });
  });
  const list = (headers: Record<string, string>): Promise<Response> =>
    fetch(`${base}/api/v1/tasks?limit=100`, { headers });

  it('answers a held request 401 KEY_REVOKED at once when its key is revoked', async () => {
    const a = await fx.key('t-rev-a');
    // An admin of a tenant that has not asked yet: its own share is untouched.
    const admin = await fx.key('t-rev-admin', 'admin');
    const b = await fx.key('t-rev-b');
    expect((await list(a.headers)).status).toBe(200);
    expect((await list(b.headers)).status).toBe(200);
    const held = list(b.headers);
    await new Promise((r) => setTimeout(r, 100));
    const revoked = await fetch(`${base}/api/v1/keys/${b.id}`, { method: 'DELETE', headers: admin.headers });
    expect(revoked.status).toBeLessThan(300);
    const res = await held;
    expect(res.status).toBe(401);
    expect(((await res.json()) as ErrorBody).error.code).toBe('KEY_REVOKED');
  });
});

describe('an /mcp request and the request share', () => {
  // Any charged request (at least 0.05 ms of the loop) puts its tenant behind, and one behind is refused at once.
  const fx = useApiFixture('http-request-share-mcp', {
    start: false,
    requestShare: { share: 0.00005, burstMs: 0, maxHeld: 0, maxWaitMs: 1000, windowMs: 60_000 },
  });
  let base = '';
  beforeAll(async () => {
    base = await fx.app.listen({ port: 0, host: '127.0.0.1' });
  });
  const list = (headers: Record<string, string>): Promise<Response> =>
    fetch(`${base}/api/v1/tasks?limit=100`, { headers });

  it('charges an /mcp request (answered by the transport itself) to its tenant like any other', async () => {
    const a = await fx.key('t-mcp-a');
    const b = await fx.key('t-mcp-b');
    expect((await list(a.headers)).status).toBe(200); // a is active: the loop is contended for b
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        ...b.headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/"result":\{\}/);
    // The charge is made when the server's response ends; give its 'close' a moment.
    await new Promise((r) => setTimeout(r, 300));
    // b's first request since: refused, because the /mcp one was charged (uncharged, b would still be even).
    const refused = await list(b.headers);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as ErrorBody).error.code).toBe('TOO_MANY_REQUESTS');
    expect((await list(a.headers)).status).toBe(200);
  });
});
