// A limit over all of a tenant's tools together (ADR 0044 amended 2026-12-07, ADR 0045), end to end: the quickjs
// driver, two runtimes on two connections of one store (SQLite file; PostgreSQL schema), tasks of one tenant
// calling different tools at once. The tenant's all-tools quota is never exceeded; a call past it fails in the
// guest with TOOL_QUOTA_EXCEEDED (details.scope "all_tools") and runs nothing; another tenant is not touched.
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import type { Runtime, RuntimeOptions } from '../../src/index.ts';
import type { TaskStore, ToolDefinition } from '../../src/internal.ts';
import { createTestPostgresStore, postgresSkipReason, postgresUrl } from '../support/postgres-store.ts';
import { useDurableFixture } from './fixture.ts';

function toolset(ran: string[]): ToolDefinition[] {
  return ['search', 'note', 'lookup'].map((name) =>
    defineTool({
      name,
      description: `${name}s.`,
      effect: 'read',
      async execute() {
        await new Promise((r) => setTimeout(r, 2));
        ran.push(name);
        return name;
      },
    }),
  );
}

const caught = `(e) => ({ code: e.code, toolError: e instanceof ToolError, ...e.details })`;
/** Each task calls two tools at once, so calls of one task and of other tasks race for the tenant's key. */
const code = (tool: string): string => `
  const one = (f) => f().catch(${caught});
  return await Promise.all([one(() => tools.search({})), one(() => tools.${tool}({}))]);
`;

type Outcome = string | Record<string, unknown>;

describe('a limit over all of a tenant’s tools together', () => {
  const fx = useDurableFixture('tenant-all-tools');
  const runtimes: Runtime[] = [];
  const stores: TaskStore[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((r) => r.close()));
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  const make = (
    ran: string[],
    limits: Pick<RuntimeOptions, 'toolRateLimits' | 'toolQuotas'>,
    store: TaskStore,
  ): Runtime => {
    const r = createRuntime({
      store,
      drivers: [fx.driver],
      tools: new ToolRegistry(toolset(ran)),
      pollMs: 20,
      concurrency: 4,
      ...limits,
    });
    runtimes.push(r);
    r.start();
    return r;
  };

  async function race(first: TaskStore, second: TaskStore, tenant: string): Promise<void> {
    const ran: string[] = [];
    const toolQuotas = [
      { tenant, tool: 'all', max: 7, period: 'day' as const },
      // Each tool on its own would allow more: the all-tools key is what holds.
      { tenant: '*', tool: '*', max: 100, period: 'day' as const },
    ];
    const a = make(ran, { toolQuotas }, first);
    const b = make(ran, { toolQuotas }, second);
    const tools = ['note', 'lookup', 'search'];
    const ids = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? a : b).submit({ code: code(tools[i % 3] ?? 'note'), tenant }),
      ),
    );
    const outputs = await Promise.all(
      ids.map(({ task_id }) => a.wait(task_id).then((v) => v.result?.output as Outcome[])),
    );
    const all = outputs.flat();
    expect(all).toHaveLength(16);
    expect(all.filter((o) => typeof o === 'string')).toHaveLength(7);
    const refusals = all.filter((o): o is Record<string, unknown> => typeof o !== 'string');
    expect(refusals).toHaveLength(9);
    for (const r of refusals) {
      expect(r).toMatchObject({
        code: 'TOOL_QUOTA_EXCEEDED',
        toolError: true,
        limit: 'quota',
        scope: 'all_tools',
        max: 7,
        period: 'day',
      });
      expect(r.retry_after_seconds).toBeGreaterThan(0);
    }
    expect(ran).toHaveLength(7);

    // Another tenant has its own all-tools key (here none: only the per-tool rule holds).
    const other = await a.wait((await a.submit({ code: code('note'), tenant: `${tenant}-other` })).task_id);
    expect(other.result?.output).toEqual(['search', 'note']);
  }

  it('holds over two runtimes on one SQLite file, each on a connection of its own', async () => {
    const second = await createSqliteTaskStore({ path: fx.path });
    stores.push(second);
    await race(fx.store, second, 'acme');
  });

  it.skipIf(postgresUrl() === null)(
    `holds over two runtimes on one PostgreSQL schema, each with a pool of its own${postgresUrl() === null ? ` (skipped: ${postgresSkipReason()})` : ''}`,
    async () => {
      const first = await createTestPostgresStore();
      stores.push(first);
      const second = await createTestPostgresStore({
        schema: (first as unknown as { schema: string }).schema,
      });
      stores.push(second);
      await race(first, second, 'globex');
    },
  );

  it('refuses over the all-tools rate with retry_after_seconds, and says which limit held', async () => {
    const ran: string[] = [];
    const runtime = make(
      ran,
      { toolRateLimits: [{ tenant: 'initech', tool: 'all', rate: 2, per: 'minute' }] },
      fx.store,
    );
    const view = await runtime.wait(
      (await runtime.submit({ code: code('lookup'), tenant: 'initech' })).task_id,
    );
    expect(view.result?.output).toEqual(['search', 'lookup']);
    const next = await runtime.wait(
      (await runtime.submit({ code: code('note'), tenant: 'initech' })).task_id,
    );
    const [first, second] = next.result?.output as Record<string, unknown>[];
    for (const r of [first, second]) {
      expect(r).toMatchObject({ code: 'TOOL_RATE_LIMITED', scope: 'all_tools', rate: 2, per: 'minute' });
      expect(r?.retry_after_seconds).toBeGreaterThan(0);
      expect(r?.retry_after_seconds).toBeLessThanOrEqual(30);
    }
    expect(ran.sort()).toEqual(['lookup', 'search']);
  });
});
