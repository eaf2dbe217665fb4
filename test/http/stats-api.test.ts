import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { buildServer } from '../../src/http/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver, ServiceStore, TaskStore } from '../../src/internal.ts';
import type { Runtime } from '../../src/api/index.ts';
import { keyAuthenticator, newApiKey } from '../../src/service/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import type { StatsOverview } from '../../src/http/stats-overview.ts';
import { createTestPostgresStore, postgresSkipReason, postgresUrl } from '../support/postgres-store.ts';
import { payTool } from './api-fixture.ts';

// GET /api/v1/stats/overview over a real runtime on each store: real tasks (two succeed after a timed tool call,
// one fails, one waits for approval, one is queued for a tenant with no runner slot), then the numbers, the scope
// of each key (a member sees its tenant, an admin every one) and the refusals.

const waitTool = defineTool({
  name: 'wait',
  description: 'waits ms',
  effect: 'read',
  execute: async (a) => {
    await new Promise((r) => setTimeout(r, (a as { ms: number }).ms));
    return (a as { ms: number }).ms;
  },
});

function statsSuite(
  name: string,
  open: () => Promise<{ store: TaskStore & ServiceStore; close: () => Promise<void> }>,
) {
  describe(`GET /api/v1/stats/overview on ${name}`, () => {
    const fx = {} as {
      store: TaskStore & ServiceStore;
      runtime: Runtime;
      driver: QuickJsDriver;
      app: ReturnType<typeof buildServer>;
      close: () => Promise<void>;
    };
    const keys = {} as Record<'a' | 'b' | 'admin', { authorization: string }>;
    const key = async (tenant: string, role: 'member' | 'admin' = 'member') => {
      const k = newApiKey();
      await fx.store.createApiKey({ id: k.id, keyHash: k.keyHash, tenant, role });
      return { authorization: `Bearer ${k.key}` };
    };
    const get = (url: string, headers: object) => fx.app.inject({ url, headers: { ...headers } });
    const submit = async (headers: object, code: string) => {
      const res = await fx.app.inject({
        method: 'POST',
        url: '/api/v1/tasks',
        payload: { code },
        headers: { ...headers },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json<{ task_id: string }>().task_id;
    };
    const statusOf = async (id: string) =>
      (await get(`/api/v1/tasks/${id}`, keys.admin)).json<{ status: string }>().status;
    async function until(id: string, status: string) {
      for (let i = 0; i < 3000 && (await statusOf(id)) !== status; i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(await statusOf(id)).toBe(status);
    }

    beforeAll(async () => {
      const opened = await open();
      fx.store = opened.store;
      fx.close = opened.close;
      fx.driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
      fx.runtime = createRuntime({
        store: fx.store,
        drivers: [fx.driver],
        tools: new ToolRegistry([payTool(), waitTool]),
        pollMs: 20,
      });
      fx.runtime.start();
      fx.app = buildServer({
        runtime: fx.runtime,
        store: fx.store,
        authenticate: keyAuthenticator(fx.store),
        keys: fx.store,
      });
      await fx.app.ready();
      keys.a = await key('stats-a');
      keys.b = await key('stats-b');
      keys.admin = await key('ops', 'admin');
    }, 60_000);
    afterAll(async () => {
      await fx.app?.close();
      await fx.runtime?.close();
      await fx.driver?.close();
      await fx.close?.();
    });

    it('is empty before any task, with 60 buckets and no quantiles', async () => {
      const res = await get('/api/v1/stats/overview', keys.a);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json<StatsOverview>();
      expect(body).toMatchObject({
        window_seconds: 3600,
        tenant: 'stats-a',
        totals: { pending: 0, running: 0, paused: 0, succeeded: 0, failed: 0, cancelled: 0 },
        tenants: [],
        pause_reasons: [],
        error_codes: [],
        task_latency_ms: { count: 0, p50: null, p99: null },
        tool_latency_ms: { count: 0, p50: null, p99: null, failed: 0 },
        capped: { tasks: false, tool_calls: false },
      });
      expect(body.throughput.buckets).toHaveLength(60);
      expect(body.throughput.bucket_seconds).toBe(60);
    });

    it('shows real tasks: throughput, errors, latency, pauses, scoped by key', async () => {
      const done1 = await submit(keys.a, 'await tools.wait({ ms: 30 }); return 1;');
      const done2 = await submit(keys.a, 'await tools.wait({ ms: 30 }); return 2;');
      const failed = await submit(keys.a, 'throw new Error("boom");');
      const paused = await submit(keys.a, 'return await tools.pay({ amount: 500 });');
      const other = await submit(keys.b, 'return 3;');
      for (const id of [done1, done2, other]) await until(id, 'succeeded');
      await until(failed, 'failed');
      await until(paused, 'paused');
      // Answers are reused for 2 s: wait past that for one that has all of them.
      await new Promise((r) => setTimeout(r, 2100));

      const a = (await get('/api/v1/stats/overview?window=600', keys.a)).json<StatsOverview>();
      expect(a).toMatchObject({
        window_seconds: 600,
        tenant: 'stats-a',
        totals: { pending: 0, running: 0, paused: 1, succeeded: 2, failed: 1, cancelled: 0 },
        tenants: [{ tenant: 'stats-a', pending: 0, running: 0, paused: 1 }],
        pause_reasons: [{ reason: 'approval_required', count: 1 }],
        task_latency_ms: { count: 3 },
        tool_latency_ms: { count: 2, failed: 0 },
        tools: [{ tool: 'tools.wait', count: 2 }],
      });
      expect(a.error_codes).toHaveLength(1);
      expect(a.error_codes[0]?.count).toBe(1);
      // The failure's code is what the task view says.
      const view = (await get(`/api/v1/tasks/${failed}`, keys.a)).json<{ error: { code: string } }>();
      expect(a.error_codes[0]?.code).toBe(view.error.code);
      // Each call waited 30 ms; the journal times it from intent to outcome.
      expect(a.tool_latency_ms.p50).toBeGreaterThanOrEqual(29);
      expect(a.tool_latency_ms.p99).toBeGreaterThanOrEqual(a.tool_latency_ms.p50 ?? Infinity);
      expect(a.task_latency_ms.p99).toBeGreaterThanOrEqual(a.task_latency_ms.p50 ?? Infinity);
      const ended = a.throughput.buckets.reduce((n, b) => n + b.succeeded + b.failed + b.cancelled, 0);
      expect(ended).toBe(3);
      expect(a.throughput.per_minute).toBeCloseTo(3 / 10, 5);

      // Tenant b's key sees b alone; the admin sees both, or one named.
      const b = (await get('/api/v1/stats/overview', keys.b)).json<StatsOverview>();
      expect(b).toMatchObject({
        tenant: 'stats-b',
        totals: { succeeded: 1, failed: 0, paused: 0 },
        error_codes: [],
      });
      const all = (await get('/api/v1/stats/overview', keys.admin)).json<StatsOverview>();
      expect(all).toMatchObject({ tenant: null, totals: { succeeded: 3, failed: 1, paused: 1 } });
      const named = (await get('/api/v1/stats/overview?tenant=stats-b', keys.admin)).json<StatsOverview>();
      expect(named).toMatchObject({ tenant: 'stats-b', totals: { succeeded: 1 } });
    });

    it('refuses another tenant to a member, a bad window, an unknown parameter and no key', async () => {
      const other = await get('/api/v1/stats/overview?tenant=stats-b', keys.a);
      expect(other.statusCode).toBe(403);
      expect(other.json()).toMatchObject({ error: { code: 'FORBIDDEN' } });
      for (const w of ['59', '86401', 'abc', '-1', '1e3']) {
        const res = await get(`/api/v1/stats/overview?window=${w}`, keys.a);
        expect(res.statusCode, w).toBe(400);
        expect(res.json<{ error: { code: string } }>().error.code).toMatch(
          /^(INVALID_ARGUMENT|BAD_REQUEST)$/,
        );
      }
      expect((await get('/api/v1/stats/overview?limit=1', keys.a)).statusCode).toBe(400);
      expect((await get('/api/v1/stats/overview', {})).statusCode).toBe(401);
    });
  });
}

statsSuite('SQLite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'codecall-stats-'));
  const store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  return {
    store,
    close: async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe.skipIf(postgresUrl() === null)(
  `on PostgreSQL${postgresUrl() === null ? ` (${postgresSkipReason()})` : ''}`,
  () => {
    statsSuite('PostgreSQL', async () => {
      const store = await createTestPostgresStore();
      return { store, close: () => store.close() };
    });
  },
);
