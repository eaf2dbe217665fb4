// The MCP endpoint of `codecall serve` (ADR 0049): a real service process on loopback, the SDK's own Client over
// Streamable HTTP with API keys. Tasks are the key's tenant's, on the service's queue; another tenant's do not
// exist for a caller; no key is 401 in the API's error shape; an approval goes paused -> approve -> succeeded.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliTestDir, startCodecall, until } from './cli-fixture.ts';

type Served = ReturnType<typeof startCodecall> & { base: string; adminKey: string };

async function connect(base: string, key: string) {
  const client = new Client({ name: 'codecall-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return {
    client,
    call: async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult,
  };
}

const structured = (r: CallToolResult) => r.structuredContent as Record<string, unknown>;

describe('codecall serve: the MCP endpoint at /mcp', () => {
  let dir: string;
  let served: Served;
  const keys: Record<string, string> = {};
  beforeAll(async () => {
    dir = await cliTestDir('cli-serve-mcp');
    const s = startCodecall(
      {},
      'serve',
      '--port',
      '0',
      '--db',
      join(dir, 'tasks.db'),
      '--tools',
      'examples/refund-tools.ts',
    );
    let base = '';
    await until(() => {
      base = /serving on (http:\/\/[^\s]+)/.exec(s.stderr())?.[1] ?? '';
      return base !== '';
    }, 60_000);
    const adminKey = /shown once\):\n\s+(cc_\S+)/.exec(s.stderr())?.[1] ?? '';
    expect(adminKey).not.toBe('');
    served = { ...s, base, adminKey };
    for (const tenant of ['acme', 'other']) {
      const res = await fetch(`${base}/api/v1/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tenant, role: 'member', name: tenant }),
      });
      expect(res.status).toBe(201);
      keys[tenant] = ((await res.json()) as { key: string }).key;
    }
  }, 90_000);
  afterAll(async () => {
    served?.child.kill('SIGTERM');
    await served?.exited;
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a request without a key (401, the error envelope) and GET (405)', async () => {
    const res = await fetch(`${served.base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    const get = await fetch(`${served.base}/mcp`, { headers: { authorization: `Bearer ${keys.acme}` } });
    expect(get.status).toBe(405);
    expect(await get.json()).toMatchObject({ error: { code: 'METHOD_NOT_ALLOWED' } });
  });

  it("runs execute as the key's tenant's task; another tenant cannot see it", async () => {
    const acme = await connect(served.base, keys.acme ?? '');
    const other = await connect(served.base, keys.other ?? '');
    try {
      expect((await acme.client.listTools()).tools.map((t) => t.name)).toContain('execute');
      const r = await acme.call('execute', {
        code: 'const o = await tools.get_order({ id: "A100" });\no.total',
      });
      expect(structured(r)).toMatchObject({ status: 'succeeded', result: 30 });
      const id = structured(r).task_id as string;
      const view = await fetch(`${served.base}/api/v1/tasks/${id}`, {
        headers: { authorization: `Bearer ${keys.acme}` },
      });
      expect(await view.json()).toMatchObject({ tenant: 'acme', status: 'succeeded' });
      const hidden = await other.call('get_task', { task_id: id });
      expect(hidden.isError).toBe(true);
      expect(structured(hidden)).toMatchObject({ error: { code: 'NOT_FOUND' } });
    } finally {
      await acme.client.close();
      await other.client.close();
    }
  }, 60_000);

  it('an approval: execute answers paused, only its tenant sees and approves it, then it succeeds', async () => {
    const acme = await connect(served.base, keys.acme ?? '');
    const other = await connect(served.base, keys.other ?? '');
    try {
      const paused = await acme.call('execute', {
        code: 'const r = await tools.refund({ id: "A101", amount: 240 });\nr.amount',
      });
      expect(structured(paused)).toMatchObject({ status: 'paused', pause_reason: 'approval_required' });
      const id = structured(paused).task_id as string;
      const inbox = await acme.call('list_pending_approvals', {});
      expect(structured(inbox).approvals).toEqual([expect.objectContaining({ task_id: id, tenant: 'acme' })]);
      expect(structured(await other.call('list_pending_approvals', {})).approvals).toEqual([]);
      const refused = await other.call('approve', { task_id: id });
      expect(structured(refused)).toMatchObject({ error: { code: 'NOT_FOUND' } });
      const done = await acme.call('approve', { task_id: id, reason: 'fine' });
      expect(structured(done)).toMatchObject({ status: 'succeeded', result: 240 });
    } finally {
      await acme.client.close();
      await other.client.close();
    }
  }, 60_000);

  it('answers as an event stream: a long wait sends progress first', async () => {
    const acme = await connect(served.base, keys.acme ?? '');
    try {
      const beats: number[] = [];
      const r = (await acme.client.callTool(
        { name: 'execute', arguments: { code: 'await new Promise((r) => setTimeout(r, 4000));\n1' } },
        undefined,
        { onprogress: (p) => beats.push(p.progress) },
      )) as CallToolResult;
      expect(structured(r)).toMatchObject({ status: 'succeeded', result: 1 });
      expect(beats[0]).toBe(1);
    } finally {
      await acme.client.close();
    }
  }, 60_000);

  it('a hostile program ends at its limit and the endpoint goes on serving', async () => {
    const acme = await connect(served.base, keys.acme ?? '');
    try {
      const loop = await acme.call('execute', { code: 'for (;;) {}', timeout_seconds: 1 });
      expect(loop.isError).toBe(true);
      expect(structured(loop)).toMatchObject({ status: 'failed', error: { code: 'TIMEOUT' } });
      const bad = await acme.call('submit_task', { code: 7 });
      expect(structured(bad)).toMatchObject({
        error: { code: 'INVALID_ARGUMENT', details: { field: 'code' } },
      });
      const after = await acme.call('execute', { code: '"still here"' });
      expect(structured(after)).toMatchObject({ status: 'succeeded', result: 'still here' });
    } finally {
      await acme.client.close();
    }
  }, 60_000);
});
