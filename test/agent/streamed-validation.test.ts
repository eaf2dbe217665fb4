// Function calling against a server that does not constrain (ADR 0057): the client streams the reply and validates
// each call's arguments by the grammar; a broken call is stopped mid-stream (the server sees the connection close
// before it finished) and the agent's next turn tells the model where it broke and what was expected.
import { describe, expect, it } from 'vitest';
import { reply, streamEvents } from '../model/scripted-model-server.ts';
import { useAgentFixture } from './agent-fixture.ts';

type Msg = { role: string; content?: string | null; tool_call_id?: string };

describe('agent, function calling with streamed validation', () => {
  const fx = useAgentFixture('agent-stream', { model: { provider: 'ollama', streamValidation: true } });

  it('stops a broken call early and feeds the position and what was expected back to the model', async () => {
    fx.model.push(
      {
        kind: 'sse',
        intervalMs: 40,
        events: streamEvents({
          toolCall: {
            id: 'call_1',
            name: 'get_price',
            // The product is a number: the grammar wants a string's opening quote at byte 12.
            pieces: ['{"product"', ': 4', '2}', ...Array.from({ length: 150 }, () => '   ')],
          },
        }),
      },
      reply({ toolCalls: [{ id: 'call_2', name: 'get_price', arguments: '{"product":"tea"}' }] }),
      reply({ content: 'tea costs 300' }),
    );
    const { task_id } = await fx.runtime.submit({ instruction: 'price of tea', mode: 'function_calling' });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toBe('tea costs 300');

    await fx.model.streams[0]?.ended;
    expect(fx.model.streams[0]?.closedEarly).toBe(true);
    expect(fx.model.streams[0]?.sent).toBeLessThan(fx.model.streams[0]?.total ?? 0);
    // The broken call never ran; the second did.
    expect(fx.calls.map((c) => c.args)).toEqual([{ product: 'tea' }]);

    const second = fx.model.requests[1]?.body.messages as Msg[];
    const told = second.find((m) => m.role === 'tool' && m.tool_call_id === 'call_1');
    const error = (JSON.parse(told?.content ?? '{}') as { error?: { code: string; message: string } }).error;
    expect(error?.code).toBe('GRAMMAR_REJECTED');
    expect(error?.message).toMatch(/^expected '"' at byte 12 of the arguments of get_price, got "4"/);

    // The stop is in the journal: what the model said and why it was stopped.
    const journal = await fx.store.readJournal(task_id);
    const stopped = journal.find((e) => e.type === 'model_reply')?.data as {
      violation?: { position: number };
    };
    expect(stopped.violation?.position).toBe(12);
  });
});
