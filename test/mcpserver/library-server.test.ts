// The library's MCP server (ADR 0049): createCodecallMcpServer over a runtime (quickjs, SQLite), one server per
// caller through runtimeTaskBackend, reached by the SDK's client over its in-memory transport. Tenants: a member
// sees its own tasks only (another's is NOT_FOUND, to get, decide, cancel or read as a resource); an admin sees all.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createCodecallMcpServer,
  createQuickJsDriver,
  createRuntime,
  createSqliteTaskStore,
  defineTool,
  runtimeTaskBackend,
  ToolRegistry,
} from '../../src/index.ts';
import type { Principal, QuickJsDriver, Runtime, TaskStore } from '../../src/internal.ts';

const transfer = defineTool({
  name: 'transfer',
  description: 'Moves money.',
  input: {
    type: 'object',
    properties: { to: { type: 'string' }, amount: { type: 'number' } },
    required: ['to', 'amount'],
  },
  effect: 'unsafe',
  requiresApproval: true,
  execute: (a) => `sent ${(a as { amount: number }).amount}`,
});

describe('createCodecallMcpServer (the library)', () => {
  let driver: QuickJsDriver;
  let store: TaskStore;
  let runtime: Runtime;
  const clients: Client[] = [];
  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    store = await createSqliteTaskStore({ path: ':memory:' });
    runtime = createRuntime({ store, drivers: [driver], tools: new ToolRegistry([transfer]) });
    runtime.start();
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await runtime.close({ pauseRunning: true });
    await driver.close();
    await store.close();
  });

  async function as(principal: Principal) {
    const server = await createCodecallMcpServer({
      tools: [transfer],
      tasks: runtimeTaskBackend({ runtime, store, principal }),
      limits: { timeoutMs: 5_000 },
    });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 'lib-test', version: '1.0.0' });
    await client.connect(b);
    clients.push(client);
    return async (name: string, args: Record<string, unknown>) => {
      const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
      return { ...r, s: r.structuredContent as Record<string, unknown> };
    };
  }
  const member = (tenant: string): Principal => ({
    tenant,
    role: 'member',
    keyId: `key_${tenant}`,
    actor: tenant,
  });

  it("runs a tenant's program as its task, paused for approval, and keeps it from other tenants", async () => {
    const acme = await as(member('acme'));
    const other = await as(member('other'));
    const admin = await as({ tenant: 'default', role: 'admin', keyId: 'key_admin', actor: 'root' });
    const paused = await acme('execute', { code: 'await tools.transfer({ to: "bo", amount: 5 })' });
    expect(paused.s).toMatchObject({ status: 'paused', pause_reason: 'approval_required' });
    const id = paused.s.task_id as string;
    expect((await runtime.get(id))?.tenant).toBe('acme');
    for (const [tool, args] of [
      ['get_task', { task_id: id }],
      ['approve', { task_id: id }],
      ['cancel', { task_id: id }],
    ] as const) {
      expect((await other(tool, args)).s).toMatchObject({ error: { code: 'NOT_FOUND' } });
    }
    expect((await other('list_pending_approvals', {})).s.approvals).toEqual([]);
    expect((await admin('list_pending_approvals', {})).s.approvals).toEqual([
      expect.objectContaining({ task_id: id, tenant: 'acme' }),
    ]);
    const done = await acme('approve', { task_id: id });
    expect(done.s).toMatchObject({ status: 'succeeded', result: 'sent 5' });
  });

  it('a wait that runs out answers with the task as it is and the call that waits on; the task goes on', async () => {
    const acme = await as(member('acme'));
    const early = await acme('execute', {
      code: 'await new Promise((r) => setTimeout(r, 1500));\n"late"',
      wait_seconds: 0.2,
    });
    expect(early.isError).toBeFalsy();
    expect(['pending', 'running']).toContain(early.s.status);
    const id = early.s.task_id as string;
    expect(early.s.next).toEqual([
      expect.objectContaining({ tool: 'get_task', arguments: { task_id: id, wait_seconds: 30 } }),
      expect.objectContaining({ tool: 'cancel', arguments: { task_id: id } }),
    ]);
    const done = await acme('get_task', { task_id: id, wait_seconds: 30 });
    expect(done.s).toMatchObject({ status: 'succeeded', result: 'late', next: [] });
  }, 30_000);

  it('runs a program with the limits it was given, and answers a program that throws with its code', async () => {
    const acme = await as(member('acme'));
    const slow = await acme('execute', { code: 'for (;;) {}' });
    expect(slow.s).toMatchObject({ status: 'failed', error: { code: 'TIMEOUT' } });
    const thrown = await acme('execute', { code: 'throw Object.assign(new Error("no"), { code: "E_NO" })' });
    expect(thrown.isError).toBe(true);
    // A program's own error is GUEST_ERROR (a program cannot claim a code of codecall's), with where it was thrown.
    expect(thrown.s).toMatchObject({ error: { code: 'GUEST_ERROR', message: 'no', line: 1 } });
    const first = thrown.content[0];
    expect(first?.type === 'text' ? first.text : '').toMatch(/failed: GUEST_ERROR: no \(line 1\)$/);
  }, 30_000);
});
