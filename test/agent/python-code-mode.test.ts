import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/index.ts';
import { pythonStubs } from '../../src/agent/python-stubs.ts';
import { createRuntime } from '../../src/durable/index.ts';
import { createOpenAiClient } from '../../src/model/index.ts';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import { ToolRegistry } from '../../src/tools/index.ts';
import { reply, startScriptedModelServer } from '../model/scripted-model-server.ts';
import type { ScriptedModelServer } from '../model/scripted-model-server.ts';
import { useDurableFixture } from '../durable/fixture.ts';
import { agentTools } from './agent-fixture.ts';
import type { CallLog } from './agent-fixture.ts';
import type { Runtime } from '../../src/api/index.ts';

const py = (code: string) => `Let me compute.\n\`\`\`python\n${code}\n\`\`\``;

describe('python stubs for the prompt', () => {
  it('render each tool as a keyword-only static method with its docs', () => {
    const text = pythonStubs(agentTools([]));
    expect(text).toContain('class tools:');
    expect(text).toContain('def get_price(*, product: str) -> dict:');
    expect(text).toContain('product (str): Product name');
    expect(text).toContain('Returns: {"product": str, "cents": float}');
    expect(text).toContain('def send_invoice(*, to: str, cents: float) -> Any:');
    expect(text).toContain('Requires human approval.');
  });
});

const probe = await probePython();

describe.skipIf(!probe.ok)(
  `agent, code mode in Python${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    const durable = useDurableFixture('agent-python');
    let model: ScriptedModelServer;
    let python: PythonDriver;
    let runtime: Runtime;
    const calls: CallLog[] = [];
    beforeAll(async () => {
      model = await startScriptedModelServer();
      python = createPythonDriver({ warm: 1 });
      const registry = new ToolRegistry(agentTools(calls, 50));
      runtime = createRuntime({
        store: durable.store,
        drivers: [durable.driver, python],
        tools: registry,
        agent: createAgent({
          model: createOpenAiClient({ provider: 'openai', baseUrl: model.baseUrl, model: 'scripted' }),
          tools: registry.definitions,
        }),
      });
    });
    afterAll(async () => {
      await runtime.close();
      await python.close();
      await model.close();
    });

    it('keeps variables, functions and imports across steps; gathers calls; feeds errors back with the line', async () => {
      model.push(
        reply({
          content: py(
            'import asyncio, statistics\ndef total(xs):\n    return sum(p["cents"] for p in xs)\nprices = await asyncio.gather(*[tools.get_price_async(product=p) for p in ["tea", "coffee"]])\nprint("got", len(prices))\ntotal(prices)',
          ),
        }),
        reply({ content: py('x = 1\ny = undefined_name + 1') }),
        reply({
          content: py(
            'extra = tools.get_price(product="milk")\nfinal_answer({"total": total(prices) + extra["cents"], "mean": statistics.mean([1, 2])})',
          ),
        }),
      );
      const { task_id } = await runtime.submit({ instruction: 'sum', language: 'python' });
      const view = await runtime.run(task_id);
      if (view.status !== 'succeeded')
        console.error(JSON.stringify({ error: view.error, steps: view.steps }, null, 1));
      expect(view.status).toBe('succeeded');
      expect(view.result?.output).toEqual({ total: 300 + 600 + 400, mean: 1.5 });
      expect(view.steps?.map((s) => s.ok)).toEqual([true, false, true]);
      expect(view.steps?.[0]?.value).toBe(900);
      expect(view.steps?.[0]?.output.map((l) => l.message)).toEqual(['got 2']);
      // The two calls of step 1 overlapped; step 3 re-ran step 1 with its outcomes from the journal.
      expect(calls.map((c) => (c.args as { product: string }).product)).toEqual(['tea', 'coffee', 'milk']);
      const [a, b] = calls;
      expect(Math.max(a!.start, b!.start)).toBeLessThan(Math.min(a!.end, b!.end));
      const feedback = (model.requests[2]?.body.messages as { role: string; content: string }[]).at(-1);
      expect(feedback?.role).toBe('tool');
      expect(feedback?.content).toMatch(
        /NameError \(GUEST_ERROR\) at line 2: name 'undefined_name' is not defined/,
      );
      const system = (model.requests[0]?.body.messages as { content: string }[])[0]?.content ?? '';
      expect(system).toContain('writing Python 3');
      expect(system).toContain('def get_price(*, product: str) -> dict:');
    });
  },
);
