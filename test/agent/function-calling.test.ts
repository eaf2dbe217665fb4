import { describe, expect, it } from 'vitest';
import { reply } from '../model/scripted-model-server.ts';
import { useAgentFixture } from './agent-fixture.ts';

type Msg = { role: string; content?: string | null; tool_call_id?: string };

const call = (id: string, name: string, args: unknown) => ({
  id,
  name,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});

describe('agent, function-calling mode', () => {
  const fx = useAgentFixture('agent-fc', { toolDelayMs: 100 });

  function lastToolMessages(): Msg[] {
    const messages = fx.model.requests.at(-1)?.body.messages as Msg[];
    return messages.filter((m, i) => m.role === 'tool' && messages.slice(i).every((n) => n.role === 'tool'));
  }

  it('runs the parallel calls of one reply at the same time and answers each', async () => {
    fx.model.push(
      reply({
        toolCalls: [
          call('a', 'get_price', { product: 'tea' }),
          call('b', 'get_price', { product: 'coffee' }),
          call('c', 'get_price', { product: 'milk' }),
        ],
      }),
      reply({ content: 'tea 300, coffee 600, milk 400' }),
    );
    const { task_id } = await fx.runtime.submit({ instruction: 'prices', mode: 'function_calling' });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toBe('tea 300, coffee 600, milk 400');
    expect(fx.calls).toHaveLength(3);
    // Every call started before any ended: they overlapped (each takes 100 ms).
    const lastStart = Math.max(...fx.calls.map((c) => c.start));
    const firstEnd = Math.min(...fx.calls.map((c) => c.end));
    expect(lastStart).toBeLessThan(firstEnd);
    const answers = lastToolMessages();
    expect(answers.map((m) => m.tool_call_id)).toEqual(['a', 'b', 'c']);
    expect(JSON.parse(answers[1]?.content ?? '')).toEqual({ product: 'coffee', cents: 600 });
    // The tools were sent as JSON Schema functions.
    const tools = fx.model.requests.at(-1)?.body.tools as { function: { name: string; strict?: boolean } }[];
    expect(tools.map((t) => t.function.name)).toEqual(['get_price', 'send_invoice']);
    expect(tools.every((t) => t.function.strict === true)).toBe(true);
  });

  it('answers unknown tools, broken JSON, invalid arguments and tool errors with clear tool messages', async () => {
    fx.model.push(
      reply({
        toolCalls: [
          call('u', 'get_weather', { city: 'Paris' }),
          call('j', 'get_price', '{"product": '),
          call('v', 'get_price', { product: 42 }),
          call('e', 'get_price', { product: 'unicorn' }),
          call('r', 'get_price', "{'product': 'tea',}"),
        ],
      }),
      reply({ content: 'done' }),
    );
    const { task_id } = await fx.runtime.submit({ instruction: 'try', mode: 'function_calling' });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    const byId: Record<string, string> = Object.fromEntries(
      lastToolMessages().map((m) => [m.tool_call_id ?? '', m.content ?? '']),
    );
    expect(byId.u).toContain('NO_SUCH_TOOL');
    expect(byId.u).toContain('get_price');
    expect(byId.j).toContain('not valid JSON');
    expect(byId.v).toContain('TOOL_VALIDATION');
    expect(byId.v).toContain('product');
    expect(byId.e).toContain('no such product: unicorn');
    // An unambiguous repair (single quotes, trailing comma) runs the call.
    expect(JSON.parse(byId.r ?? '')).toEqual({ product: 'tea', cents: 300 });
    expect(fx.calls.map((c) => c.args)).toEqual([{ product: 'unicorn' }, { product: 'tea' }]);
  });

  it('fails after max_step_retries failed steps in a row', async () => {
    fx.model.push(
      reply({ toolCalls: [call('1', 'nope', {})] }),
      reply({ toolCalls: [call('2', 'nope', {})] }),
    );
    const before = fx.model.requests.length;
    const { task_id } = await fx.runtime.submit({
      instruction: 'x',
      mode: 'function_calling',
      maxStepRetries: 1,
    });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('failed');
    expect(view.error?.message).toContain('2 failed steps in a row');
    // The first failure went back to the model as the answer to its call; the second ended the task unasked.
    expect(fx.model.requests.length - before).toBe(2);
    const answers = lastToolMessages();
    expect(answers.map((m) => m.tool_call_id)).toEqual(['1']);
    expect(answers[0]?.content).toContain('nope');
  });

  it('pauses for approval and sends the approved call result to the model after resuming', async () => {
    fx.model.push(
      reply({ toolCalls: [call('i', 'send_invoice', { to: 'bob', cents: 5 })] }),
      reply({ content: 'invoice sent' }),
    );
    const { task_id } = await fx.runtime.submit({ instruction: 'invoice bob', mode: 'function_calling' });
    const paused = await fx.runtime.run(task_id);
    expect(paused.status).toBe('paused');
    expect(paused.pending_approvals.map((a) => a.tool)).toEqual(['tools.send_invoice']);
    expect(paused.pending_approvals[0]?.arguments).toEqual({ to: 'bob', cents: 5 });
    await fx.runtime.decide(task_id, [{ approvalId: paused.pending_approvals[0]!.id, decision: 'approve' }]);
    const done = await fx.runtime.run(task_id);
    expect(done.status).toBe('succeeded');
    expect(JSON.parse(lastToolMessages()[0]?.content ?? '')).toEqual({ sent: true, to: 'bob', cents: 5 });
    expect(fx.calls.map((c) => c.name)).toEqual(['send_invoice']);
  });
});
