// The operator's ceilings on tool budgets (ADR 0044) over the HTTP API, as `codecall serve` reads them from its
// config: above one is a 400 naming the wire's field and the ceiling (a batch names its task); without a budget of
// its own a task runs with the ceiling.
import { beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/index.ts';
import { loadConfig } from '../../src/service/config.ts';
import { serviceBudgetCeilings } from '../../src/service/service-budgets.ts';
import { countTasks, useApiFixture } from './api-fixture.ts';
import type { ApiKey, ErrorBody } from './api-fixture.ts';

const config = loadConfig({
  env: {
    CODECALL_MAX_TASK_TOOL_CALLS: '4',
    CODECALL_MAX_TASK_COST: '2.5',
    CODECALL_MAX_TOOL_BUDGETS: JSON.stringify({ 'tools.search': { max_calls: 2, max_wall_seconds: 30 } }),
  },
});

describe('tool budget ceilings through the HTTP API', () => {
  const search = defineTool({
    name: 'search',
    description: 'Searches.',
    effect: 'read',
    execute: () => 'hit',
  });
  const fx = useApiFixture('http-budget-ceilings', {
    tools: [search],
    runtime: { ceilings: serviceBudgetCeilings(config) },
  });
  let key: ApiKey;
  beforeAll(async () => {
    key = await fx.key('ceilings-tenant');
  });
  const post = (url: string, payload: unknown) =>
    fx.app.inject({ method: 'POST', url, headers: key.headers, payload: payload as object });

  it('reads the ceilings from the config, in the runtime form', () => {
    expect(serviceBudgetCeilings(config)).toEqual({
      maxTaskToolCalls: 4,
      maxTaskCost: 2.5,
      maxToolBudgets: { 'tools.search': { maxCalls: 2, maxWallSeconds: 30 } },
    });
    expect(serviceBudgetCeilings(loadConfig({ env: {} }))).toEqual({});
    expect(() => loadConfig({ env: { CODECALL_MAX_TOOL_BUDGETS: '{"search":{"max_calls":1}}' } })).toThrow(
      /maxToolBudgets/,
    );
    expect(() =>
      loadConfig({ env: { CODECALL_MAX_TOOL_BUDGETS: '{"tools.search":{"max_calls":-1}}' } }),
    ).toThrow(/maxToolBudgets/);
  });

  const cases: [string, Record<string, unknown>, number][] = [
    ['tool_constraints.budgets.max_calls', { max_calls: 5 }, 4],
    ['tool_constraints.budgets.max_cost', { max_cost: 2.51 }, 2.5],
    [
      'tool_constraints.budgets.tools["tools.search"].max_calls',
      { tools: { 'tools.search': { max_calls: 3 } } },
      2,
    ],
    [
      'tool_constraints.budgets.tools["tools.search"].max_wall_seconds',
      { tools: { 'tools.search': { max_wall_seconds: 31 } } },
      30,
    ],
  ];
  it.each(cases)('refuses %s above its ceiling, storing nothing', async (field, budgets, ceiling) => {
    const before = await countTasks(fx.store);
    const res = await post('/api/v1/tasks', { code: '1', tool_constraints: { budgets } });
    expect(res.statusCode).toBe(400);
    const body = res.json<ErrorBody>();
    expect(body.error.code).toBe('INVALID_ARGUMENT');
    expect(body.error.details).toMatchObject({ field, ceiling });
    expect(body.error.message).toContain("(the service's ceiling)");
    expect(await countTasks(fx.store)).toBe(before);
  });

  it('names the task of a batch that asks for more', async () => {
    const res = await post('/api/v1/tasks/batch', {
      tasks: [{ code: '1' }, { code: '2', tool_constraints: { budgets: { max_calls: 9 } } }],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<ErrorBody>().error.details).toMatchObject({
      field: 'tasks[1].tool_constraints.budgets.max_calls',
      ceiling: 4,
    });
  });

  it('runs a task without budgets under the ceilings, and one at them', async () => {
    const code = `
      const out = [];
      for (let i = 0; i < 3; i++) {
        try { out.push(await tools.search({})); } catch (e) { out.push([e.code, e.details.budget, e.details.limit]); }
      }
      return out;`;
    for (const budgets of [undefined, { max_calls: 4, tools: { 'tools.search': { max_calls: 2 } } }]) {
      const res = await post('/api/v1/tasks', {
        code,
        ...(budgets ? { tool_constraints: { budgets } } : {}),
      });
      expect(res.statusCode, res.body).toBe(201);
      const { task_id } = res.json<{ task_id: string }>();
      let view: Record<string, unknown> = {};
      for (let i = 0; i < 500 && !['succeeded', 'failed'].includes(String(view.status)); i++) {
        await new Promise((r) => setTimeout(r, 10));
        view = (await fx.app.inject({ url: `/api/v1/tasks/${task_id}`, headers: key.headers })).json();
      }
      expect(view).toMatchObject({
        status: 'succeeded',
        result: { output: ['hit', 'hit', ['TOOL_BUDGET_EXCEEDED', 'tool_max_calls', 2]] },
      });
    }
  });
});
