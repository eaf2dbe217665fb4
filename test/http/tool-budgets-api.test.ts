// Tool budgets over the HTTP API (ADR 0044): the wire's snake_case tool_constraints.budgets, the task's view with
// what it used, a tool's own budget and cost in GET /api/v1/tools, and bad budgets as 400s naming the field.
import { beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/index.ts';
import { useApiFixture } from './api-fixture.ts';
import type { ApiKey, ErrorBody } from './api-fixture.ts';

describe('tool budgets through the HTTP API', () => {
  const ran: string[] = [];
  const search = defineTool({
    name: 'search',
    description: 'Searches.',
    input: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    effect: 'read',
    budget: { maxCalls: 10, maxWallSeconds: 60 },
    cost: (a) => ((a as { q: string }).q.length > 3 ? 2 : 1),
    execute: (a) => {
      ran.push((a as { q: string }).q);
      return (a as { q: string }).q;
    },
  });
  const fx = useApiFixture('http-budgets', { tools: [search] });
  let key: ApiKey;
  beforeAll(async () => {
    key = await fx.key('budgets-tenant');
  });
  const post = (payload: unknown) =>
    fx.app.inject({ method: 'POST', url: '/api/v1/tasks', headers: key.headers, payload: payload as object });
  async function settled(id: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 500; i++) {
      const res = await fx.app.inject({ url: `/api/v1/tasks/${id}`, headers: key.headers });
      const view = res.json<Record<string, unknown>>();
      if (['succeeded', 'failed', 'paused'].includes(String(view.status))) return view;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`task ${id} never settled`);
  }

  it('takes tool_constraints.budgets in snake_case and shows the budgets and their use in the view', async () => {
    const res = await post({
      code: `
        const out = [];
        for (const q of ['a', 'long one', 'b', 'c']) {
          try { out.push(await tools.search({ q })); }
          catch (e) { out.push([e.code, e.details.budget, e.details.limit, e.details.used]); }
        }
        return out;`,
      tool_constraints: { budgets: { max_cost: 4, tools: { 'tools.search': { max_calls: 3 } } } },
    });
    expect(res.statusCode, res.body).toBe(201);
    const { task_id } = res.json<{ task_id: string }>();
    const view = await settled(task_id);
    // a (1), 'long one' (2), b (1): 4 of max_cost 4; c would be a 4th call of 3.
    expect(view).toMatchObject({
      status: 'succeeded',
      result: { output: ['a', 'long one', 'b', ['TOOL_BUDGET_EXCEEDED', 'tool_max_calls', 3, 3]] },
      budgets: {
        max_cost: 4,
        tools: { 'tools.search': { max_calls: 3 } },
        used: { calls: 3, cost: 4, tools: { 'tools.search': { calls: 3 } } },
      },
    });
    expect(ran).toEqual(['a', 'long one', 'b']);
    // A list reads no journal: the budgets without their use.
    const list = await fx.app.inject({ url: '/api/v1/tasks', headers: key.headers });
    const item = list
      .json<{ tasks: { task_id: string; budgets?: unknown }[] }>()
      .tasks.find((t) => t.task_id === task_id);
    expect(item?.budgets).toEqual({ max_cost: 4, tools: { 'tools.search': { max_calls: 3 } }, used: null });
  });

  it("lists a tool's own budget and cost in GET /api/v1/tools", async () => {
    const res = await fx.app.inject({ url: '/api/v1/tools', headers: key.headers });
    expect(res.json<{ tools: unknown[] }>().tools[0]).toMatchObject({
      name: 'tools.search',
      cost: 'by_arguments',
      budget: { max_calls: 10, max_wall_seconds: 60 },
    });
  });

  it('answers 400 naming the field for budgets it cannot take', async () => {
    const cases: [unknown, string][] = [
      [{ max_calls: -1 }, 'max_calls'],
      [{ max_calls: 2.5 }, 'max_calls'],
      [{ max_cost: 'ten' }, 'max_cost'],
      [{ maxCalls: 2 }, 'maxCalls'],
      [{ tools: { search: { max_calls: 1 } } }, 'tool_constraints.budgets.tools["search"]'],
      [{ tools: { 'egress.fetch': { max_calls: 1 } } }, 'tool_constraints.budgets.tools["egress.fetch"]'],
      [{ tools: { 'tools.search': { max_wall_seconds: -1 } } }, 'max_wall_seconds'],
      [{ tools: { 'tools.search': { max_call: 1 } } }, 'max_call'],
    ];
    for (const [budgets, field] of cases) {
      const res = await post({ code: 'return 1', tool_constraints: { budgets } });
      expect(res.statusCode, JSON.stringify(budgets)).toBe(400);
      const { error } = res.json<ErrorBody>();
      expect(error.code, JSON.stringify(budgets)).toMatch(/^(INVALID_ARGUMENT|BAD_REQUEST)$/);
      expect(`${error.message} ${JSON.stringify(error.details)}`, JSON.stringify(budgets)).toContain(field);
    }
  });
});
