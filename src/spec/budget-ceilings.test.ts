import { describe, expect, it } from 'vitest';
import { ceiledBudgets } from './budget-ceilings.ts';

describe('ceiledBudgets', () => {
  it('leaves the budgets as they are without ceilings, and is undefined when neither sets any', () => {
    const task = { maxCalls: 3, tools: { 'a.b': { maxCalls: 1 } } };
    expect(ceiledBudgets(task, undefined)).toBe(task);
    expect(ceiledBudgets(undefined, undefined)).toBeUndefined();
    expect(ceiledBudgets(undefined, {})).toBeUndefined();
  });

  it('gives a task that sets none the ceiling itself', () => {
    expect(
      ceiledBudgets(undefined, { maxCalls: 50, maxCost: 9.5, tools: { 'web.search': { maxCalls: 5 } } }),
    ).toEqual({ maxCalls: 50, maxCost: 9.5, tools: { 'web.search': { maxCalls: 5 } } });
  });

  it('keeps the smaller of each, tool by tool, and a tool only one of them names', () => {
    expect(
      ceiledBudgets(
        {
          maxCalls: 80,
          tools: { 'web.search': { maxCalls: 9, maxWallSeconds: 2 }, 'db.query': { maxCalls: 4 } },
        },
        { maxCalls: 50, maxCost: 10, tools: { 'web.search': { maxCalls: 5, maxWallSeconds: 30 } } },
      ),
    ).toEqual({
      maxCalls: 50,
      maxCost: 10,
      tools: { 'web.search': { maxCalls: 5, maxWallSeconds: 2 }, 'db.query': { maxCalls: 4 } },
    });
    // A task below the ceiling keeps its own.
    expect(ceiledBudgets({ maxCalls: 2, maxCost: 1 }, { maxCalls: 50, maxCost: 10 })).toEqual({
      maxCalls: 2,
      maxCost: 1,
    });
  });
});
