// Each tenant's own budget ceilings (issue 21): `tenantBudgetCeilings` in the config replaces the global ceilings
// field by field for that tenant (`*`: the tenants not named), at submit and at every run.
import { beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/index.ts';
import { loadConfig } from '../../src/service/config.ts';
import { serviceBudgetCeilings } from '../../src/service/service-budgets.ts';
import { budgetCeilingsFor } from '../../src/spec/budget-ceilings.ts';
import { useApiFixture } from './api-fixture.ts';
import type { ApiKey, ErrorBody } from './api-fixture.ts';

const config = loadConfig({
  env: {
    CODECALL_MAX_TASK_TOOL_CALLS: '4',
    CODECALL_MAX_TOOL_BUDGETS: JSON.stringify({ 'tools.search': { max_calls: 2 } }),
    CODECALL_TENANT_BUDGET_CEILINGS: JSON.stringify({
      big: { max_calls: 10, tools: { 'tools.search': { max_calls: 6 } } },
      '*': { max_calls: 3 },
      ['__proto__']: { max_calls: 1 },
    }),
  },
});

describe('budget ceilings per tenant', () => {
  it('resolves a tenant, then `*`, then the global ceilings, field by field', () => {
    const global = { maxCalls: 4, tools: { 'tools.search': { maxCalls: 2 } } };
    const tenants = { big: { maxCalls: 10 }, '*': { maxCost: 1 } };
    expect(budgetCeilingsFor(global, tenants, 'big')).toEqual({
      maxCalls: 10,
      tools: { 'tools.search': { maxCalls: 2 } },
    });
    expect(budgetCeilingsFor(global, tenants, 'other')).toEqual({ ...global, maxCost: 1 });
    expect(budgetCeilingsFor(global, { big: { maxCalls: 10 } }, 'other')).toBe(global);
    expect(budgetCeilingsFor(undefined, undefined, 'x')).toBeUndefined();
    // A tenant named like an Object.prototype member is only ever its own entry.
    expect(budgetCeilingsFor(undefined, { big: { maxCalls: 1 } }, 'constructor')).toBeUndefined();
  });

  it('reads them from the config in the runtime form, and refuses a bad entry naming it', () => {
    const ceilings = serviceBudgetCeilings(config);
    expect(ceilings.tenantBudgetCeilings?.big).toEqual({
      maxCalls: 10,
      tools: { 'tools.search': { maxCalls: 6 } },
    });
    expect(ceilings.tenantBudgetCeilings?.['*']).toEqual({ maxCalls: 3 });
    // A tenant key `__proto__` never becomes the map's prototype (the config's parser drops it).
    expect(Object.getPrototypeOf(ceilings.tenantBudgetCeilings)).toBe(Object.prototype);
    expect(budgetCeilingsFor(undefined, ceilings.tenantBudgetCeilings, 'toString')).toEqual({ maxCalls: 3 });
    const bad = loadConfig({
      env: { CODECALL_TENANT_BUDGET_CEILINGS: JSON.stringify({ acme: { max_calls: -1 } }) },
    });
    expect(() => serviceBudgetCeilings(bad)).toThrow(/tenantBudgetCeilings\["acme"\]/);
    expect(() => loadConfig({ env: { CODECALL_TENANT_BUDGET_CEILINGS: '[1]' } })).toThrow(
      /tenantBudgetCeilings/,
    );
  });

  const search = defineTool({
    name: 'search',
    description: 'Searches.',
    effect: 'read',
    execute: () => 'hit',
  });
  const fx = useApiFixture('http-tenant-budget-ceilings', {
    tools: [search],
    runtime: { ceilings: serviceBudgetCeilings(config) },
  });
  let big: ApiKey;
  let small: ApiKey;
  beforeAll(async () => {
    big = await fx.key('big');
    small = await fx.key('small');
  });
  const post = (key: ApiKey, payload: unknown) =>
    fx.app.inject({ method: 'POST', url: '/api/v1/tasks', headers: key.headers, payload: payload as object });

  it("holds each tenant's tasks to its own ceilings at submit", async () => {
    // 8 calls: above the global 4, within big's 10; `*` (3) holds for small.
    expect((await post(big, { code: '1', tool_constraints: { budgets: { max_calls: 8 } } })).statusCode).toBe(
      201,
    );
    const refused = await post(small, { code: '1', tool_constraints: { budgets: { max_calls: 4 } } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json<ErrorBody>().error.details).toMatchObject({
      field: 'tool_constraints.budgets.max_calls',
      ceiling: 3,
    });
  });

  it('runs a task without budgets under its tenant’s ceilings', async () => {
    const code = `
      const out = [];
      for (let i = 0; i < 8; i++) {
        try { out.push(await tools.search({})); } catch (e) { out.push([e.details.budget, e.details.limit]); break; }
      }
      return out;`;
    const outputs: unknown[] = [];
    for (const key of [big, small]) {
      const res = await post(key, { code });
      expect(res.statusCode, res.body).toBe(201);
      const { task_id } = res.json<{ task_id: string }>();
      let view: Record<string, unknown> = {};
      for (let i = 0; i < 1000 && !['succeeded', 'failed'].includes(String(view.status)); i++) {
        await new Promise((r) => setTimeout(r, 10));
        view = (await fx.app.inject({ url: `/api/v1/tasks/${task_id}`, headers: key.headers })).json();
      }
      expect(view.status).toBe('succeeded');
      outputs.push((view.result as { output: unknown }).output);
    }
    // big: its own search ceiling (6) replaces the global one (2); small: the global per-tool 2 under `*`'s 3 calls.
    expect(outputs).toEqual([
      ['hit', 'hit', 'hit', 'hit', 'hit', 'hit', ['tool_max_calls', 6]],
      ['hit', 'hit', ['tool_max_calls', 2]],
    ]);
  });
});
