// The guest's fetch through the host (issue 21), end to end: a real HTTP server on loopback (allowed only because
// the operator's egress says allowPrivate), the quickjs driver, the runtime and a SQLite store. Requests are
// journaled: a resumed task sees the same bytes without the server being asked again.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { createEgress } from '../../src/egress/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import type { Runtime } from '../../src/api/index.ts';
import type { TenantNetworkPolicies } from '../../src/spec/index.ts';
import { useDurableFixture } from './fixture.ts';
import { startRecordingServer } from './egress-test-server.ts';
import type { RecordingServer, Seen } from './egress-test-server.ts';

let server: RecordingServer;
let port = 0;
let seen: Seen[] = [];

beforeAll(async () => {
  server = await startRecordingServer((req, raw, res) => {
    const body = raw.toString();
    if (req.url === '/echo') {
      res.writeHead(201, 'Made', { 'content-type': 'text/plain', 'x-seen': req.method ?? '' });
      res.end(`${req.method} ${body}`);
    } else if (req.url === '/slow') {
      setTimeout(() => res.writeHead(200).end('late'), 3000).unref();
    } else if (req.url === '/to-metadata') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    } else if (req.url === '/to-elsewhere') {
      res.writeHead(302, { location: 'https://example.com/' }).end();
    } else if (req.url?.startsWith('/big/')) {
      const n = Number(req.url.slice('/big/'.length));
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(n, 7));
    } else if (req.url === '/bytes') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([0, 1, 254, 255]));
    } else return false;
    return true;
  });
  port = server.port;
  seen = server.seen;
});
afterAll(() => server.close());

describe('fetch from a JavaScript task', () => {
  const fx = useDurableFixture('egress');
  const runtimes: Runtime[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((r) => r.close()));
  });
  const make = (
    options: { egress?: boolean; egressMaxRequests?: number; policies?: TenantNetworkPolicies } = {},
  ): Runtime => {
    const r = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([]),
      pollMs: 20,
      ...(options.policies
        ? { egressPolicies: options.policies, ceilings: { networkPolicies: options.policies } }
        : {}),
      ...(options.egress === false ? {} : { egress: createEgress({ allowPrivate: true }) }),
      ...(options.egressMaxRequests === undefined ? {} : { egressMaxRequests: options.egressMaxRequests }),
    });
    runtimes.push(r);
    r.start();
    return r;
  };
  const access = (extra: Record<string, unknown> = {}) => ({
    networkAccess: { allow: [`127.0.0.1:${port}`], allowHttp: true, ...extra },
  });

  it('gets, posts and reads bytes; the journal names the calls and the allow entry', async () => {
    const runtime = make();
    const task = await runtime.submit({
      code: `
        const a = await fetch('http://127.0.0.1:${port}/count');
        const b = await fetch('http://127.0.0.1:${port}/echo', { method: 'POST', body: 'hello', headers: { 'X-Mine': '1' } });
        const c = await fetch('http://127.0.0.1:${port}/bytes');
        return { a: [a.status, a.ok, await a.json()], b: [b.status, b.statusText, b.headers.get('x-seen'), await b.text()],
          c: [...new Uint8Array(await c.arrayBuffer())], url: c.url };`,
      constraints: access(),
    });
    const done = await runtime.wait(task.task_id, { until: 'terminal' });
    expect(done).toMatchObject({ status: 'succeeded' });
    const before = seen.length;
    expect((done.result as { output: unknown }).output).toMatchObject({
      a: [200, true, { n: expect.any(Number) as number }],
      b: [201, 'Made', 'POST', 'POST hello'],
      c: [0, 1, 254, 255],
      url: `http://127.0.0.1:${port}/bytes`,
    });
    const posted = seen.slice(0, before).find((s) => s.url === '/echo');
    expect(posted?.headers['x-mine']).toBe('1');
    const journal = await fx.store.readJournal(task.task_id);
    const tools = journal.flatMap((e) => (e.type === 'tool_intent' ? [e.data.tool] : []));
    expect(tools).toEqual(['egress.read', 'egress.fetch', 'egress.read']);
    const outcome = journal.find((e) => e.type === 'tool_outcome');
    expect(outcome?.type === 'tool_outcome' && outcome.data.payload).toContain(`127.0.0.1:${port}`);
  });

  it('a resumed task sees the same bytes and the server is not asked again', async () => {
    const runtime = make();
    const task = await runtime.submit({
      code: `
        const first = await (await fetch('http://127.0.0.1:${port}/count')).json();
        const answer = await input.wait('go');
        const second = await (await fetch('http://127.0.0.1:${port}/count')).json();
        return { first, answer, second };`,
      constraints: access(),
    });
    expect(await runtime.wait(task.task_id)).toMatchObject({
      status: 'paused',
      pause_reason: 'awaiting_input',
    });
    const counted = seen.filter((s) => s.url === '/count').length;
    const firstN = server.count;
    await runtime.provideInput(task.task_id, 'go', 'yes');
    const done = await runtime.wait(task.task_id, { until: 'terminal' });
    expect(done).toMatchObject({
      status: 'succeeded',
      result: { output: { first: { n: firstN }, answer: 'yes', second: { n: firstN + 1 } } },
    });
    // The replay answered the first fetch from the journal: one more request, the second one.
    expect(seen.filter((s) => s.url === '/count').length).toBe(counted + 1);
  });

  it('refusals are catchable errors with stable codes', async () => {
    const runtime = make();
    const task = await runtime.submit({
      code: `
        const codes = [];
        for (const [url, init] of [['https://example.com/', {}], ['http://127.0.0.1:${port}/count', { method: 'DELETE' }]]) {
          try { await fetch(url, init); codes.push('fetched'); } catch (e) { codes.push(e.code + ':' + (e.details && e.details.reason)); }
        }
        // Malformed URLs are TypeErrors, whether the guest parses them or the host does.
        for (const url of ['http://[::1/x', 'http://u:p@127.0.0.1:${port}/', 'http://127.0.0.1:99999/']) {
          try { await fetch(url); codes.push('fetched'); } catch (e) { codes.push(e instanceof TypeError ? 'TypeError' : e.code); }
        }
        return codes;`,
      constraints: access({ methods: ['GET'] }),
    });
    const done = await runtime.wait(task.task_id, { until: 'terminal' });
    expect(done).toMatchObject({
      status: 'succeeded',
      result: {
        output: [
          'EGRESS_REFUSED:not_allowed',
          'EGRESS_REFUSED:method',
          'TypeError',
          'TypeError',
          'TypeError',
        ],
      },
    });
  });

  it('a slow server times out, and redirects are checked hop by hop', async () => {
    const runtime = make();
    const task = await runtime.submit({
      code: `
        const out = [];
        for (const path of ['/slow', '/to-metadata', '/to-elsewhere']) {
          try { await fetch('http://127.0.0.1:${port}' + path); out.push('fetched'); }
          catch (e) { out.push(e.code + ':' + (e.details.reason ?? e.details.timeout_seconds)); }
        }
        return out;`,
      constraints: access({ timeoutSeconds: 0.5 }),
    });
    expect(await runtime.wait(task.task_id, { until: 'terminal' })).toMatchObject({
      status: 'succeeded',
      result: { output: ['EGRESS_TIMEOUT:0.5', 'EGRESS_REFUSED:not_allowed', 'EGRESS_REFUSED:not_allowed'] },
    });
  });

  it('a refusal nobody catches fails the task with its own code', async () => {
    const runtime = make();
    const task = await runtime.submit({
      code: "await fetch('https://example.com/'); return 1;",
      constraints: access(),
    });
    expect(await runtime.wait(task.task_id, { until: 'terminal' })).toMatchObject({
      status: 'failed',
      error: { code: 'EGRESS_REFUSED' },
    });
  });

  it('max_requests holds over a pause: the journal counts what was made', async () => {
    const runtime = make();
    const task = await runtime.submit({
      code: `
        const get = () => fetch('http://127.0.0.1:${port}/count').then((r) => r.status, (e) => e.code);
        const a = await get();
        await input.wait('go');
        const b = await get();
        const c = await get();
        return [a, b, c];`,
      constraints: access({ maxRequests: 2 }),
    });
    expect(await runtime.wait(task.task_id)).toMatchObject({ status: 'paused' });
    await runtime.provideInput(task.task_id, 'go', 1);
    expect(await runtime.wait(task.task_id, { until: 'terminal' })).toMatchObject({
      status: 'succeeded',
      result: { output: [200, 200, 'EGRESS_LIMIT'] },
    });
  });

  it('the operator ceiling caps a task that asks for more', async () => {
    const runtime = make({ egressMaxRequests: 1 });
    const task = await runtime.submit({
      code: `
        const get = () => fetch('http://127.0.0.1:${port}/count').then((r) => r.status, (e) => e.code);
        return [await get(), await get()];`,
      constraints: access({ maxRequests: 50 }),
    });
    expect(await runtime.wait(task.task_id, { until: 'terminal' })).toMatchObject({
      result: { output: [200, 'EGRESS_LIMIT'] },
    });
  });

  it('a body over the journal’s bound arrives whole from the body store; one over max_bytes is EGRESS_LIMIT', async () => {
    const runtime = make();
    const task = await runtime.submit({
      code: `
        const get = (n) => fetch('http://127.0.0.1:${port}/big/' + n).then(
          async (r) => (await r.arrayBuffer()).byteLength, (e) => [e.code, e.details.limit]);
        return [await get(500000), await get(2000000), await get(3000000)];`,
      constraints: access({ maxBytes: 2500000 }),
    });
    expect(await runtime.wait(task.task_id, { until: 'terminal' })).toMatchObject({
      status: 'succeeded',
      result: { output: [500000, 2000000, ['EGRESS_LIMIT', 'max_bytes']] },
    });
  });

  it("a tenant's network policy refuses more at submit, and narrows a stored task at run time", async () => {
    const policy = { allow: [`127.0.0.1:${port}`], allowHttp: true, maxRequests: 1 };
    const strict = make({ policies: { acme: policy } });
    const refused = await strict
      .submit({ tenant: 'acme', code: 'return 1', constraints: access({ maxRequests: 5 }) })
      .then(
        () => 'accepted',
        (e: { code?: string; message?: string }) => `${e.code}: ${e.message}`,
      );
    expect(refused).toMatch(
      /INVALID_ARGUMENT: .*max_requests: must be at most 1 \(tenant acme's network policy\)/,
    );
    // Another tenant is not bound by acme's policy.
    const other = await strict.submit({
      tenant: 'other',
      code: 'return 1',
      constraints: access({ maxRequests: 5 }),
    });
    expect(await strict.wait(other.task_id, { until: 'terminal' })).toMatchObject({ status: 'succeeded' });
    await strict.close();
    runtimes.splice(runtimes.indexOf(strict), 1);
    // Stored by a runtime without the policy (not running tasks), run under it: only what it allows now.
    const open = createRuntime({ store: fx.store, drivers: [fx.driver], tools: new ToolRegistry([]) });
    const get = `fetch('http://127.0.0.1:${port}/count').then((r) => r.status, (e) => e.code + ':' + e.details.limit)`;
    const task = await open.submit({
      tenant: 'acme',
      code: `return [await ${get}, await ${get}];`,
      constraints: access({ maxRequests: 5 }),
    });
    await open.close();
    const later = make({ policies: { acme: policy } });
    expect(await later.wait(task.task_id, { until: 'terminal' })).toMatchObject({
      status: 'succeeded',
      result: { output: [200, 'EGRESS_LIMIT:max_requests'] },
    });
  });

  it('a runtime without egress fails such a task clearly; bad network_access is refused at submit', async () => {
    const runtime = make({ egress: false });
    const task = await runtime.submit({ code: 'return 1', constraints: access() });
    expect(await runtime.wait(task.task_id, { until: 'terminal' })).toMatchObject({
      status: 'failed',
      error: { code: 'INVALID_CONFIG' },
    });
    const refused = async (networkAccess: unknown) =>
      runtime.submit({ code: 'return 1', constraints: { networkAccess } as never }).then(
        () => 'accepted',
        (e: { code?: string; message?: string }) => `${e.code}: ${e.message}`,
      );
    expect(await refused(true)).toMatch(/INVALID_ARGUMENT: .*network_access: true is not enough/);
    expect(await refused({ allow: ['https://x.com/path'] })).toMatch(/INVALID_ARGUMENT: .*allow/);
    expect(await refused({ allow: ['x.com'], maxRequests: 0 })).toMatch(
      /max_requests must be an integer of at least 1/,
    );
    expect(await refused({ allow: ['x.com'], other: 1 })).toMatch(/unknown key "other"/);
    expect(await refused(false)).toBe('accepted');
  });
});
