// Per-tenant rate limits and quotas through the service (ADR 0045): the config keys (given here as flags, JSON text
// as on the command line), real servers (startService on loopback) sharing one SQLite file, tenants' API keys.
// A tenant's quota holds over both servers; another tenant is not limited; a refused call is a failed call in the
// task's journal with its code; a bad rule stops the start with INVALID_CONFIG naming its field.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import { startService } from '../../src/http/index.ts';
import type { Service } from '../../src/http/index.ts';
import { loadConfig, newApiKey } from '../../src/service/index.ts';
import { defineTool } from '../../src/tools/index.ts';

const ran: string[] = [];
const search = defineTool({
  name: 'search',
  description: 'Searches.',
  input: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  effect: 'read',
  execute: (a) => {
    ran.push((a as { q: string }).q);
    return (a as { q: string }).q;
  },
});

const LIMITS = {
  toolQuotas: JSON.stringify([{ tenant: 'acme', tool: 'tools.search', max: 3, period: 'month' }]),
  toolRateLimits: JSON.stringify([{ tenant: 'acme', tool: '*', rate: 100, per: 'second' }]),
};

describe('tenant limits through the service', () => {
  let dir: string;
  const servers: Service[] = [];
  const keys: Record<string, string> = {};
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-tenant-limits-'));
    for (let i = 0; i < 2; i++) {
      const config = loadConfig({
        env: {},
        flags: { port: '0', db: join(dir, 'tasks.db'), python: false, ...LIMITS },
      });
      servers.push(await startService(config, { log: () => undefined, model: null, tools: [search] }));
    }
    for (const tenant of ['acme', 'globex']) {
      const key = newApiKey();
      await servers[0]!.store.createApiKey({ id: key.id, keyHash: key.keyHash, tenant, role: 'member' });
      keys[tenant] = key.key;
    }
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  const headers = (tenant: string) => ({
    authorization: `Bearer ${keys[tenant]}`,
    'content-type': 'application/json',
  });
  async function run(server: number, tenant: string, n: number): Promise<Record<string, unknown>> {
    const code = `
      const out = [];
      for (let i = 0; i < ${n}; i++) {
        try { out.push(await tools.search({ q: '${tenant}' + i })); }
        catch (e) { out.push([e.code, e.details.limit, e.details.max, e.details.period, e.details.retry_after_seconds > 0]); }
      }
      return out;`;
    const base = servers[server]!.address;
    const res = await fetch(`${base}/api/v1/tasks`, {
      method: 'POST',
      headers: headers(tenant),
      body: JSON.stringify({ code }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const { task_id } = (await res.json()) as { task_id: string };
    for (let i = 0; i < 1000; i++) {
      const view = (await (
        await fetch(`${base}/api/v1/tasks/${task_id}`, { headers: headers(tenant) })
      ).json()) as Record<string, unknown>;
      if (['succeeded', 'failed'].includes(String(view.status))) return view;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`task ${task_id} never ended`);
  }

  it("holds a tenant's quota over two servers on one database; another tenant is not limited", async () => {
    const refused = ['TOOL_QUOTA_EXCEEDED', 'quota', 3, 'month', true];
    const first = await run(0, 'acme', 2);
    expect(first.result).toMatchObject({ output: ['acme0', 'acme1'] });
    const second = await run(1, 'acme', 2);
    expect(second.result).toMatchObject({ output: ['acme0', refused] });
    const other = await run(1, 'globex', 4);
    expect(other.result).toMatchObject({ output: ['globex0', 'globex1', 'globex2', 'globex3'] });
    expect(ran.filter((q) => q.startsWith('acme'))).toHaveLength(3);

    // The journal holds the refused call as a failed one, marked, with its code (the console's timeline shows it).
    const page = (await (
      await fetch(`${servers[0]!.address}/api/v1/tasks/${String(second.task_id)}/events?limit=1000`, {
        headers: headers('acme'),
      })
    ).json()) as { events: { type: string; source?: string; data: Record<string, unknown> }[] };
    const entries = page.events.filter((e) => e.source !== 'audit');
    const intents = entries.filter((e) => e.type === 'tool_intent').map((e) => e.data);
    expect(intents.map((d) => d.over_budget ?? null)).toEqual([null, 'tenant_quota']);
    const outcomes = entries.filter((e) => e.type === 'tool_outcome').map((e) => e.data);
    expect(outcomes[1]).toMatchObject({ ok: false });
    expect(String(outcomes[1]?.payload)).toContain('TOOL_QUOTA_EXCEEDED');
  });

  it('refuses to start on a bad rule, naming its field', async () => {
    const config = loadConfig({
      env: {},
      flags: {
        port: '0',
        db: join(dir, 'bad.db'),
        python: false,
        toolQuotas: JSON.stringify([{ tenant: 'acme', tool: '*', max: 3, period: 'week' }]),
      },
    });
    const error = await startService(config, { log: () => undefined, model: null }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CodecallError);
    expect(error).toMatchObject({ code: 'INVALID_CONFIG', details: { field: 'toolQuotas[0].period' } });
    expect(String((error as Error).message)).toContain(
      'toolQuotas[0].period must be one of hour, day, month',
    );
  });
});
