// The egress's audit trail (ADR 0043, amended 2026-12-06): one record per hop that left the box or was refused at
// it, naming the task, call, destination, pinned address, method, path, allow entry, outcome, status and sizes;
// never a header, a body, a query string or a secret. Real servers on loopback; a durable task through the runtime.
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import type { Runtime } from '../../src/api/index.ts';
import type { EgressAuditRecord } from '../../src/spec/index.ts';
import { useDurableFixture } from '../durable/fixture.ts';
import { access, get, localEgress, never, startServer } from './servers.ts';

const SECRET = 'top-secret-value-123';

describe('egress audit records', () => {
  it('an answer, a POST, a redirect to a refused host and a refusal: one record a hop, nothing secret in any', async () => {
    const server = await startServer((req, res) => {
      if (req.url?.startsWith('/away')) res.writeHead(302, { location: 'https://example.com/x?t=1' }).end();
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('hello world');
    });
    const records: EgressAuditRecord[] = [];
    const egress = localEgress({
      audit: (r) => records.push(r),
      secrets: [{ name: 'TOKEN', value: SECRET, hosts: [`127.0.0.1:${server.port}`] }],
    });
    const allow = access([`127.0.0.1:${server.port}`]);
    const context = { taskId: 't-1', tenant: 'acme', callId: 'c-1' };
    await egress.fetch(
      get(server.url('/data?api_key=query-secret'), {
        headers: [['authorization', 'Bearer {{secret:TOKEN}}']],
      }),
      allow,
      { signal: never(), audit: context },
    );
    await egress.fetch(
      get(server.url('/post'), { method: 'POST', body: Buffer.from('twelve bytes').toString('base64') }),
      allow,
      { signal: never() },
    );
    await expect(egress.fetch(get(server.url('/away')), allow, { signal: never() })).rejects.toMatchObject({
      code: 'EGRESS_REFUSED',
    });
    await expect(egress.fetch(get('https://example.org/'), allow, { signal: never() })).rejects.toMatchObject(
      {
        code: 'EGRESS_REFUSED',
      },
    );
    const at = `127.0.0.1:${server.port}`;
    expect(records).toEqual([
      {
        ...context,
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as string,
        method: 'GET',
        scheme: 'http',
        host: '127.0.0.1',
        port: server.port,
        path: '/data',
        address: '127.0.0.1',
        allowedBy: at,
        outcome: 'ok',
        status: 200,
        code: null,
        reason: null,
        requestBytes: 0,
        responseBytes: 11,
        stored: false,
        hop: 0,
        durationMs: expect.any(Number) as number,
      },
      expect.objectContaining({ method: 'POST', path: '/post', requestBytes: 12, responseBytes: 11 }),
      expect.objectContaining({ path: '/away', outcome: 'ok', status: 302, hop: 0, address: '127.0.0.1' }),
      expect.objectContaining({
        host: 'example.com',
        port: 443,
        path: '/x',
        outcome: 'refused',
        code: 'EGRESS_REFUSED',
        reason: 'not_allowed',
        address: null,
        allowedBy: null,
        status: null,
        hop: 1,
      }),
      expect.objectContaining({ host: 'example.org', outcome: 'refused', reason: 'not_allowed', hop: 0 }),
    ]);
    const all = JSON.stringify(records);
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain('query-secret');
    expect(all).not.toContain('hello');
    expect(server.seen[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
  });

  it('a failed connection and a body over max_bytes are recorded with their codes; a sink that throws changes nothing', async () => {
    const server = await startServer((_req, res) => res.end('x'.repeat(5000)));
    const records: EgressAuditRecord[] = [];
    const egress = localEgress({ audit: (r) => records.push(r) });
    await expect(
      egress.fetch(get(server.url('/big')), access([`127.0.0.1:${server.port}`], { maxBytes: 100 }), {
        signal: never(),
      }),
    ).rejects.toMatchObject({ code: 'EGRESS_LIMIT' });
    expect(records).toEqual([
      expect.objectContaining({ outcome: 'limit', code: 'EGRESS_LIMIT', reason: 'max_bytes', status: 200 }),
    ]);
    const throwing = localEgress({
      audit: () => {
        throw new Error('sink down');
      },
    });
    const ok = await throwing.fetch(get(server.url('/big')), access([`127.0.0.1:${server.port}`]), {
      signal: never(),
    });
    expect(ok.status).toBe(200);
  });

  describe('durable', () => {
    const fx = useDurableFixture('egress-audit');
    const runtimes: Runtime[] = [];
    afterEach(async () => {
      await Promise.all(runtimes.splice(0).map((r) => r.close()));
    });

    it('a task’s requests are recorded with its id, tenant and call ids; a replay records nothing', async () => {
      const server = await startServer((_req, res) => res.end('ok'));
      const records: EgressAuditRecord[] = [];
      const runtime = createRuntime({
        store: fx.store,
        drivers: [fx.driver],
        tools: new ToolRegistry([]),
        pollMs: 20,
        egress: localEgress({ audit: (r) => records.push(r) }),
      });
      runtimes.push(runtime);
      runtime.start();
      const task = await runtime.submit({
        code: `const a = await (await fetch('${server.url('/one')}')).text();
          const answer = await input.wait('go');
          return a + answer;`,
        constraints: { networkAccess: { allow: [`127.0.0.1:${server.port}`], allowHttp: true } },
      });
      expect(await runtime.wait(task.task_id)).toMatchObject({ status: 'paused' });
      await runtime.provideInput(task.task_id, 'go', '!');
      expect(await runtime.wait(task.task_id, { until: 'terminal' })).toMatchObject({
        status: 'succeeded',
        result: { output: 'ok!' },
      });
      const journal = await fx.store.readJournal(task.task_id);
      const callId = journal.find((e) => e.type === 'tool_intent')?.data.call_id;
      expect(records).toEqual([
        expect.objectContaining({
          taskId: task.task_id,
          tenant: 'default',
          callId,
          path: '/one',
          status: 200,
        }),
      ]);
    });
  });
});
