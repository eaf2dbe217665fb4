// Tool budgets in agent mode (ADR 0044): the prompt says each tool's budget in the task next to its declaration,
// and the budget holds across steps: a step re-runs the earlier steps' code with their calls replayed from the
// journal, which counts each once.
import { describe, expect, it } from 'vitest';
import { reply } from '../model/scripted-model-server.ts';
import { js, useAgentFixture } from './agent-fixture.ts';

describe('agent, tool budgets', () => {
  const fx = useAgentFixture('agent-budgets');

  it("says the tool's budget in the prompt and holds it across steps", async () => {
    fx.model.push(
      reply({
        content: js(
          'const a = await tools.get_price({ product: "tea" });\nconst b = await tools.get_price({ product: "coffee" });\n[a.cents, b.cents]',
        ),
      }),
      reply({
        content: js(
          'const more = await Promise.allSettled(["milk", "sugar"].map((product) => tools.get_price({ product })));\nfinal_answer(more.map((r) => r.status === "fulfilled" ? r.value.cents : r.reason.code + " " + r.reason.details.budget))',
        ),
      }),
    );
    const { task_id } = await fx.runtime.submit({
      instruction: 'Price four things.',
      constraints: { budgets: { tools: { 'tools.get_price': { maxCalls: 3 } } } },
    });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    // Step 2 replayed step 1's two calls (not counted again): one call was left, for the first of its two.
    expect(view.result?.output).toEqual([400, 'TOOL_BUDGET_EXCEEDED tool_max_calls']);
    expect(fx.calls.map((c) => (c.args as { product: string }).product)).toEqual(['tea', 'coffee', 'milk']);
    expect(view.budgets?.used).toMatchObject({ calls: 3, tools: { 'tools.get_price': { calls: 3 } } });
    const system = (fx.model.requests[0]?.body.messages as { content: string }[])[0]?.content ?? '';
    expect(system).toContain(
      'At most 3 calls in this task; past that a call fails with code TOOL_BUDGET_EXCEEDED.',
    );
  });
});
