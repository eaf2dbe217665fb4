import { describe, expect, it } from 'vitest';
import { reply } from '../model/scripted-model-server.ts';
import { js, useAgentFixture } from './agent-fixture.ts';

type Msg = { role: string; content?: string | null; tool_call_id?: string; tool_calls?: { id: string }[] };

function messagesOf(body: Record<string, unknown>): Msg[] {
  return body.messages as Msg[];
}

describe('agent, code mode', () => {
  const fx = useAgentFixture('agent-code');

  it('keeps a variable across steps and answers with final_answer', async () => {
    fx.model.push(
      reply({
        content: js(
          'const prices = await Promise.all(["tea", "coffee"].map((p) => tools.get_price({ product: p })));\nconsole.log(prices.length);\nprices.map((p) => p.cents)',
        ),
      }),
      reply({
        content: js('const total = prices.reduce((s, p) => s + p.cents, 0);\nfinal_answer({ total })'),
      }),
    );
    const submitted = await fx.runtime.submit({ instruction: 'What do tea and coffee cost together?' });
    const view = await fx.runtime.run(submitted.task_id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toEqual({ total: 900 });
    expect(fx.calls.map((c) => c.name)).toEqual(['get_price', 'get_price']);
    // Step 2 re-ran step 1's code with its tool outcomes from the journal: no call ran twice.
    expect(view.current_step).toBe(2);
    expect(view.progress.steps_completed).toBe(2);
    expect(view.steps?.map((s) => s.ok)).toEqual([true, true]);
    expect(view.steps?.[0]?.tool_calls.map((c) => c.tool)).toEqual(['tools.get_price', 'tools.get_price']);
    expect(view.steps?.[0]?.value).toEqual([300, 600]);
    expect(view.steps?.[1]?.final).toBe(true);
    // The second request told the model how step 1 went, as a tool message answering a run_code call.
    const second = messagesOf(fx.model.requests.at(-1)!.body);
    const assistant = second.at(-2)!;
    const tool = second.at(-1)!;
    expect(assistant.role).toBe('assistant');
    expect(tool.role).toBe('tool');
    expect(tool.tool_call_id).toBe(assistant.tool_calls?.[0]?.id);
    expect(tool.content).toContain('Output:\n2');
    expect(tool.content).toContain('300');
    // The system prompt shows the tools as TypeScript declarations.
    expect(second[0]?.content).toContain(
      'get_price(args: { product: string }): Promise<{ product: string; cents: number }>',
    );
  });

  it('ends with the text of a reply without code', async () => {
    fx.model.push(reply({ content: 'Paris is the capital of France.' }));
    const { task_id } = await fx.runtime.submit({ instruction: 'Capital of France?' });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toBe('Paris is the capital of France.');
    expect(view.steps).toHaveLength(1);
  });

  it('feeds errors back with their line and fails after max_step_retries failed steps in a row', async () => {
    fx.model.push(
      reply({ content: js('const a = 1;\nnull.boom();') }),
      reply({ content: js('const = broken') }),
      reply({ content: js('await tools.get_price({ product: "unicorn" })') }),
    );
    const { task_id } = await fx.runtime.submit({ instruction: 'fail', maxStepRetries: 2 });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('failed');
    expect(view.error?.code).toBe('TOOL_ERROR');
    expect(view.error?.message).toContain('no such product: unicorn');
    expect(view.error?.message).toContain('3 failed steps in a row');
    const requests = fx.model.requests.slice(-2).map((r) => messagesOf(r.body).at(-1)?.content ?? '');
    expect(requests[0]).toMatch(/TypeError \(GUEST_ERROR\) at line 2/);
    expect(requests[0]).toContain('2 tries left');
    expect(requests[1]).toMatch(/SyntaxError \(SYNTAX_ERROR\) at line 1/);
    expect(view.steps?.map((s) => s.ok)).toEqual([false, false, false]);
  });

  it('recovers after a failed step: variables of the failed step are not kept, earlier ones are', async () => {
    fx.model.push(
      reply({ content: js('const base = 40;') }),
      reply({ content: js('const extra = 1;\nthrow new Error("oops")') }),
      reply({ content: js('typeof extra === "undefined" ? base + 2 : -1') }),
      reply({ content: 'done' }),
    );
    const { task_id } = await fx.runtime.submit({ instruction: 'x' });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    expect(view.steps?.[2]?.value).toBe(42);
  });

  it('stops at max_steps', async () => {
    fx.model.push(reply({ content: js('1') }), reply({ content: js('2') }));
    const { task_id } = await fx.runtime.submit({ instruction: 'loop', maxSteps: 2 });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('failed');
    expect(view.error?.code).toBe('MAX_STEPS_EXCEEDED');
  });

  it('pauses for approval inside a step and goes on after it without asking the model again', async () => {
    fx.model.push(
      reply({
        content: js(
          'const p = await tools.get_price({ product: "tea" });\nconst r = await tools.send_invoice({ to: "ann", cents: p.cents });\nfinal_answer(r)',
        ),
      }),
    );
    const { task_id } = await fx.runtime.submit({ instruction: 'invoice ann for tea' });
    const paused = await fx.runtime.run(task_id);
    expect(paused.status).toBe('paused');
    expect(paused.pause_reason).toBe('approval_required');
    expect(paused.pending_approvals).toHaveLength(1);
    const requestsBefore = fx.model.requests.length;
    await fx.runtime.decide(task_id, [{ approvalId: paused.pending_approvals[0]!.id, decision: 'approve' }]);
    const done = await fx.runtime.run(task_id);
    expect(done.status).toBe('succeeded');
    expect(done.result?.output).toEqual({ sent: true, to: 'ann', cents: 300 });
    expect(fx.model.requests.length).toBe(requestsBefore);
    expect(fx.calls.map((c) => c.name)).toEqual(['get_price', 'send_invoice']);
  });

  it('shows and binds only the tools the task may use', async () => {
    fx.model.push(
      reply({ content: js('await tools.send_invoice({ to: "x", cents: 1 })') }),
      reply({ content: 'no' }),
    );
    const { task_id } = await fx.runtime.submit({
      instruction: 'x',
      tools: ['tools.get_price'],
      maxStepRetries: 0,
    });
    const view = await fx.runtime.run(task_id);
    const system = (fx.model.requests.at(-1)?.body.messages as { content: string }[])[0]?.content ?? '';
    expect(system).toContain('get_price(');
    expect(system).not.toContain('send_invoice');
    expect(view.status).toBe('failed');
    expect(view.steps?.[0]?.error).toMatchObject({ code: 'NO_SUCH_TOOL' });
    expect(fx.calls).toHaveLength(0);
  });

  it('fails an instruction task at once when the runtime has no model', async () => {
    const { createRuntime } = await import('../../src/durable/index.ts');
    const { createAgent } = await import('../../src/agent/index.ts');
    const { ToolRegistry } = await import('../../src/tools/index.ts');
    const runtime = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([]),
      agent: createAgent({ model: null, tools: [] }),
    });
    const { task_id } = await runtime.submit({ instruction: 'anything' });
    const view = await runtime.run(task_id);
    expect(view.status).toBe('failed');
    expect(view.error?.code).toBe('MODEL_NOT_CONFIGURED');
    expect(view.error?.message).toContain('OPENAI_API_KEY');
    await runtime.close();
  });
});
