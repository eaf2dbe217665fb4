// The operator's ceilings on tool budgets (ADR 0044), through the runtime: refused above at submit, the ceiling
// itself for a task that sets no budget, and held to at every run, so a task stored before a ceiling (or before it
// was lowered) runs under it too.
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import type { LimitCeilings } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import type { Runtime } from '../../src/api/index.ts';
import { useDurableFixture } from './fixture.ts';

const ping = defineTool({ name: 'ping', description: 'Pings.', effect: 'read', execute: () => 'pong' });
const echo = defineTool({ name: 'echo', description: 'Echoes.', effect: 'read', execute: () => 'echo' });
/** Calls ping n times (then echo m times), each refusal as [code, budget, limit]. */
const program = (n: number, m = 0) => `
  const out = [];
  for (let i = 0; i < ${n + m}; i++) {
    try { out.push(await (i < ${n} ? tools.ping({}) : tools.echo({}))); }
    catch (e) { out.push([e.code, e.details.budget, e.details.limit]); }
  }
  return out;`;

describe('budget ceilings', () => {
  const fx = useDurableFixture('budget-ceilings');
  const runtimes: Runtime[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((r) => r.close()));
  });
  const make = (ceilings: LimitCeilings, start = true): Runtime => {
    const r = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([ping, echo]),
      pollMs: 20,
      ceilings,
    });
    runtimes.push(r);
    if (start) r.start();
    return r;
  };

  it('refuses budgets above a ceiling at submit, naming the field and the ceiling', async () => {
    const runtime = make(
      { maxTaskToolCalls: 5, maxTaskCost: 2.5, maxToolBudgets: { 'tools.ping': { maxWallSeconds: 10 } } },
      false,
    );
    const refusal = (budgets: object) =>
      runtime.submit({ code: '1', constraints: { budgets } }).then(
        () => null,
        (e: { code: string; details: unknown }) => ({ code: e.code, details: e.details }),
      );
    expect(await refusal({ maxCalls: 6 })).toEqual({
      code: 'INVALID_ARGUMENT',
      details: { field: 'tool_constraints.budgets.max_calls', ceiling: 5 },
    });
    expect(await refusal({ maxCost: 2.6 })).toMatchObject({
      details: { field: 'tool_constraints.budgets.max_cost', ceiling: 2.5 },
    });
    expect(await refusal({ tools: { 'tools.ping': { maxWallSeconds: 11 } } })).toMatchObject({
      details: { field: 'tool_constraints.budgets.tools["tools.ping"].max_wall_seconds', ceiling: 10 },
    });
    // A malformed budget is the usual refusal, whatever the ceilings.
    expect(await refusal({ maxCalls: -1 })).toMatchObject({
      details: { field: 'tool_constraints.budgets.max_calls' },
    });
    // At the ceilings, and per tool where the operator sets none: accepted.
    expect(
      await refusal({
        maxCalls: 5,
        maxCost: 2.5,
        tools: { 'tools.ping': { maxCalls: 99, maxWallSeconds: 10 } },
      }),
    ).toBeNull();
  });

  it('gives a task without budgets the ceiling, and holds a stored task to a ceiling set later', async () => {
    // Stored where no ceiling holds, asking for 4 calls of ping and for none in all.
    const before = make({}, false);
    const stored = await before.submit({
      code: program(5),
      constraints: { budgets: { tools: { 'tools.ping': { maxCalls: 4 } } } },
    });
    const plain = await before.submit({ code: program(4) });
    await before.close();
    // Run where the operator's ceilings are 3 calls in all, 2 of ping.
    const after = make({ maxTaskToolCalls: 3, maxToolBudgets: { 'tools.ping': { maxCalls: 2 } } });
    const ran = await after.wait(stored.task_id);
    expect(ran.result?.output).toEqual([
      'pong',
      'pong',
      ['TOOL_BUDGET_EXCEEDED', 'tool_max_calls', 2],
      ['TOOL_BUDGET_EXCEEDED', 'tool_max_calls', 2],
      ['TOOL_BUDGET_EXCEEDED', 'tool_max_calls', 2],
    ]);
    // The view shows the task's own budgets; the refusals name the limit that held.
    expect(ran.budgets).toMatchObject({ tools: { 'tools.ping': { max_calls: 4 } }, used: { calls: 2 } });
    const defaulted = await after.wait(plain.task_id);
    expect((defaulted.result?.output as unknown[]).slice(2)).toEqual([
      ['TOOL_BUDGET_EXCEEDED', 'tool_max_calls', 2],
      ['TOOL_BUDGET_EXCEEDED', 'tool_max_calls', 2],
    ]);
    // The total: 3 calls of any tools, the third of echo the last one run.
    const total = await after.submit({ code: program(2, 2) });
    expect((await after.wait(total.task_id)).result?.output).toEqual([
      'pong',
      'pong',
      'echo',
      ['TOOL_BUDGET_EXCEEDED', 'max_calls', 3],
    ]);
    // A task's own lower budget still wins.
    const own = await after.submit({ code: program(0, 3), constraints: { budgets: { maxCalls: 1 } } });
    expect((await after.wait(own.task_id)).result?.output).toEqual([
      'echo',
      ['TOOL_BUDGET_EXCEEDED', 'max_calls', 1],
      ['TOOL_BUDGET_EXCEEDED', 'max_calls', 1],
    ]);
  });
});
