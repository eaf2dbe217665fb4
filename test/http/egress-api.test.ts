// network_access over the HTTP API (issue 21): the wire's snake_case form, its refusals as 400s naming the field,
// and a secret bound to a destination: the server receives it, the journal, the task view and the guest never do.
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { createEgress } from '../../src/egress/index.ts';
import { buildServer } from '../../src/http/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import type { Runtime } from '../../src/api/index.ts';
import { useDurableFixture } from '../durable/fixture.ts';

const SECRET = 'tok_9f3c2a7e51d04b8a';

describe('network_access through the HTTP API', () => {
  const fx = useDurableFixture('egress-api');
  let runtime: Runtime;
  let app: ReturnType<typeof buildServer>;
  let server: Server;
  let port = 0;
  const received: IncomingHttpHeaders[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      received.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ authorized: req.headers.authorization === `Bearer ${SECRET}` }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    runtime = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([]),
      pollMs: 20,
      egress: createEgress({
        allowPrivate: true,
        secrets: [{ name: 'api', value: SECRET, hosts: [`127.0.0.1:${port}`] }],
      }),
    });
    runtime.start();
    app = buildServer({ runtime, store: fx.store, bodyLimit: 64 * 1024 });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const post = (payload: unknown) =>
    app.inject({ method: 'POST', url: '/api/v1/tasks', payload: payload as object });
  async function until(id: string, statuses: string[]): Promise<Record<string, unknown>> {
    for (let i = 0; i < 500; i++) {
      const view = (await app.inject({ url: `/api/v1/tasks/${id}` })).json<Record<string, unknown>>();
      if (statuses.includes(String(view.status))) return view;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`task ${id} never became ${statuses.join(' or ')}`);
  }

  it('runs a task whose fetch carries a bound secret the guest never sees', async () => {
    const res = await post({
      code: `
        const req = new Request('http://127.0.0.1:${port}/me', { headers: { authorization: 'Bearer {{secret:api}}' } });
        const r = await fetch(req);
        return { body: await r.json(), guestSees: req.headers.get('authorization') };`,
      tool_constraints: {
        network_access: { allow: [`127.0.0.1:${port}`], allow_http: true, max_requests: 3, methods: ['GET'] },
      },
    });
    expect(res.statusCode).toBe(201);
    const { task_id } = res.json<{ task_id: string }>();
    const done = await until(task_id, ['succeeded', 'failed']);
    expect(done).toMatchObject({
      status: 'succeeded',
      result: { output: { body: { authorized: true }, guestSees: 'Bearer {{secret:api}}' } },
    });
    expect(received.at(-1)?.authorization).toBe(`Bearer ${SECRET}`);
    const journal = JSON.stringify(await fx.store.readJournal(task_id));
    expect(journal).toContain('{{secret:api}}');
    expect(journal).not.toContain(SECRET);
    const events = (await app.inject({ url: `/api/v1/tasks/${task_id}` })).body;
    expect(events).not.toContain(SECRET);
  });

  it('a secret for another host is refused, and nothing is sent', async () => {
    const before = received.length;
    const res = await post({
      code: `
        try { await fetch('http://localhost:${port}/', { headers: { 'x-key': '{{secret:api}}' } }); return 'sent'; }
        catch (e) { return [e.code, e.details.reason]; }`,
      tool_constraints: { network_access: { allow: [`localhost:${port}`], allow_http: true } },
    });
    const done = await until(res.json<{ task_id: string }>().task_id, ['succeeded', 'failed']);
    expect(done).toMatchObject({ result: { output: ['EGRESS_REFUSED', 'secret'] } });
    expect(received.length).toBe(before);
  });

  it('refuses a network_access the wire schema or the check rejects, naming the field', async () => {
    const cases: [unknown, RegExp][] = [
      [true, /true is not enough/],
      [{ allow: [] }, /network_access/],
      [{ allow: ['a.com'], max_requests: 0 }, /network_access/],
      [{ allow: ['a.com'], maxRequests: 2 }, /network_access/],
      [{ allow: ['http://a.com'] }, /is not a host/],
      [{ allow: ['a.com'], methods: ['CONNECT'] }, /CONNECT/],
    ];
    for (const [value, message] of cases) {
      const res = await post({ code: 'return 1', tool_constraints: { network_access: value } });
      expect(res.statusCode, JSON.stringify(value)).toBe(400);
      const body = res.json<{ error: { code: string; message: string } }>();
      expect(body.error.code, JSON.stringify(value)).toMatch(/INVALID_ARGUMENT|BAD_REQUEST/);
      expect(body.error.message, JSON.stringify(value)).toMatch(message);
    }
  });
});
