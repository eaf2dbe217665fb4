import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/index.ts';
import { createRuntime } from '../../src/durable/index.ts';
import { createOpenAiClient } from '../../src/model/index.ts';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import { defineTool, ToolRegistry } from '../../src/tools/index.ts';
import type { Runtime } from '../../src/api/index.ts';
import type { SandboxDriver } from '../../src/spec/index.ts';
import { reply, startScriptedModelServer } from '../model/scripted-model-server.ts';
import type { ScriptedModelServer } from '../model/scripted-model-server.ts';
import { useDurableFixture } from '../durable/fixture.ts';

// Issue 18 in agent mode: a step pays, then fails on a typo; the model sends the step again, fixed. The retried
// step takes the payment over from the failed one (ADR 0034): the ledger shows one payment, the model is told
// what was reused and what was not repeated.

const js = (code: string) => `Here is the code:\n\`\`\`javascript\n${code}\n\`\`\``;
const py = (code: string) => `Here is the code:\n\`\`\`python\n${code}\n\`\`\``;

interface Ledger {
  payments: unknown[];
  reads: number;
}

function ledgerTools(ledger: Ledger) {
  return new ToolRegistry([
    defineTool({
      name: 'pay',
      description: 'Pays an amount (unsafe).',
      input: { type: 'object', properties: { amount: { type: 'number' }, to: { type: 'string' } } },
      effect: 'unsafe',
      execute: (a) => {
        ledger.payments.push(a);
        return { receipt: `r${ledger.payments.length}` };
      },
    }),
    defineTool({
      name: 'balance',
      description: 'The balance (read).',
      effect: 'read',
      execute: () => {
        ledger.reads += 1;
        return 1000 - 100 * ledger.payments.length;
      },
    }),
  ]);
}

type Msg = { role: string; content?: string | null };
const lastMessage = (model: ScriptedModelServer) =>
  (model.requests.at(-1)?.body.messages as Msg[]).at(-1)?.content ?? '';

function useWorld(name: string, extraDriver?: () => SandboxDriver) {
  const durable = useDurableFixture(name);
  const w = {} as { model: ScriptedModelServer; runtime: Runtime; ledger: Ledger; extra?: SandboxDriver };
  beforeAll(async () => {
    w.model = await startScriptedModelServer();
    w.ledger = { payments: [], reads: 0 };
    const registry = ledgerTools(w.ledger);
    if (extraDriver) w.extra = extraDriver();
    w.runtime = createRuntime({
      store: durable.store,
      drivers: w.extra ? [durable.driver, w.extra] : [durable.driver],
      tools: registry,
      agent: createAgent({
        model: createOpenAiClient({ provider: 'openai', baseUrl: w.model.baseUrl, model: 'scripted' }),
        tools: registry.definitions,
      }),
    });
  });
  afterAll(async () => {
    await w.runtime.close();
    await w.extra?.close();
    await w.model.close();
  });
  return w;
}

describe('agent mode: a retried step takes over what the failed step did', () => {
  const w = useWorld('step-retry-carry');

  it('the model makes a typo after paying, then fixes it: one payment in the ledger', async () => {
    w.model.push(
      reply({
        content: js(
          'const r = await tools.pay({ amount: 100, to: "acme" });\nconst b = await tools.balance({});\nconsole.log(r.receipt, b);\nrecipt.id',
        ),
      }),
      reply({
        content: js(
          'const r = await tools.pay({ to: "acme", amount: 100 });\nconst b = await tools.balance({});\nfinal_answer({ receipt: r.receipt, balance: b })',
        ),
      }),
    );
    const { task_id } = await w.runtime.submit({ instruction: 'Pay acme 100.' });
    const view = await w.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toEqual({ receipt: 'r1', balance: 900 });
    expect(w.ledger.payments).toEqual([{ amount: 100, to: 'acme' }]);
    expect(w.ledger.reads).toBe(1);
    expect(view.steps?.map((s) => s.ok)).toEqual([false, true]);
    // The prompt says completed calls are not repeated.
    const system = (w.model.requests[0]?.body.messages as Msg[])[0]?.content ?? '';
    expect(system).toContain('Tool calls that completed in a failed step are not repeated');
  });

  it('a completed payment the fixed step leaves out is reported to the model, never silently dropped', async () => {
    w.ledger.payments.length = 0;
    w.model.push(
      reply({
        content: js(
          'await tools.pay({ amount: 5, to: "a" });\nawait tools.pay({ amount: 7, to: "b" });\nundefinedName',
        ),
      }),
      reply({ content: js('const r = await tools.pay({ amount: 5, to: "a" });\nr.receipt') }),
      reply({ content: 'Done.' }),
    );
    const { task_id } = await w.runtime.submit({ instruction: 'Pay a and b.' });
    const view = await w.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    expect(w.ledger.payments).toEqual([
      { amount: 5, to: 'a' },
      { amount: 7, to: 'b' },
    ]);
    const feedback = lastMessage(w.model);
    expect(feedback).toContain('1 tool call of the failed step was not run again');
    expect(feedback).toContain(
      'Already executed, not repeated: tools.pay({"amount":7,"to":"b"}) (s1.call-2)',
    );
  });

  it('a retried step that changes a completed payment pauses for a human naming both calls', async () => {
    w.ledger.payments.length = 0;
    w.model.push(
      reply({ content: js('await tools.pay({ amount: 100, to: "acme" });\noops()') }),
      reply({
        content: js('const r = await tools.pay({ amount: 120, to: "acme" });\nfinal_answer(r.receipt)'),
      }),
    );
    const { task_id } = await w.runtime.submit({ instruction: 'Pay acme.' });
    const paused = await w.runtime.run(task_id);
    expect(paused).toMatchObject({ status: 'paused', pause_reason: 'needs_attention' });
    expect(paused.error?.message).toContain('tools.pay({"amount":120,"to":"acme"})');
    expect(paused.error?.message).toContain('s1.call-1');
    expect(paused.attention_calls.map((c) => c.call_id)).toEqual(['s2.call-1']);
    expect(w.ledger.payments).toHaveLength(1);
    await w.runtime.resolveAttention(task_id, { action: 'retry', reason: 'the amount changed' });
    const done = await w.runtime.run(task_id);
    expect(done.status).toBe('succeeded');
    expect(done.result?.output).toBe('r2');
    expect(w.ledger.payments).toEqual([
      { amount: 100, to: 'acme' },
      { amount: 120, to: 'acme' },
    ]);
  });
});

const probe = await probePython();

describe.skipIf(!probe.ok)(
  `agent mode in Python: a retried step takes over the failed step's payment${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    const w = useWorld('step-retry-carry-py', () => createPythonDriver({ warm: 1 }));

    it('pays, fails on a typo, is fixed: one payment', async () => {
      w.model.push(
        reply({ content: py('r = tools.pay(amount=100, to="acme")\nb = tools.balance()\nprint(recipt)') }),
        reply({
          content: py(
            'r = tools.pay(to="acme", amount=100)\nb = tools.balance()\nfinal_answer([r["receipt"], b])',
          ),
        }),
      );
      const { task_id } = await w.runtime.submit({ instruction: 'Pay acme 100.', language: 'python' });
      const view = await w.runtime.run(task_id);
      if (view.status !== 'succeeded')
        console.error(JSON.stringify({ error: view.error, steps: view.steps }));
      expect(view.status).toBe('succeeded');
      expect(view.result?.output).toEqual(['r1', 900]);
      expect(w.ledger.payments).toEqual([{ amount: 100, to: 'acme' }]);
      expect(w.ledger.reads).toBe(1);
    });
  },
);
