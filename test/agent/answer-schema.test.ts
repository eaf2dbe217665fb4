// Structured final answers (issue 23): an instruction task's `answerSchema` is checked at submit, sent with every
// model request in the provider's constraint form (ADR 0057), and the task's result is the answer's parsed value; an
// answer outside the schema is fed back to the model as a failed step, and a streamed one that breaks it is stopped.
import { describe, expect, it } from 'vitest';
import { reply, streamEvents } from '../model/scripted-model-server.ts';
import { js, useAgentFixture } from './agent-fixture.ts';

type Msg = { role: string; content?: string | null };

const WEATHER = {
  type: 'object',
  properties: { city: { type: 'string' }, celsius: { type: 'number' } },
  required: ['city', 'celsius'],
  additionalProperties: false,
};

describe('agent, structured final answers (OpenAI preset)', () => {
  const fx = useAgentFixture('agent-answer-schema');

  it("sends response_format, feeds a wrong answer back, and returns the right one's parsed value", async () => {
    fx.model.push(
      reply({ content: '{"city":"Paris"}' }),
      reply({ content: '{"city":"Paris","celsius":21.5}' }),
    );
    const { task_id } = await fx.runtime.submit({
      instruction: 'weather in Paris',
      mode: 'function_calling',
      answerSchema: WEATHER,
    });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toEqual({ city: 'Paris', celsius: 21.5 });

    const first = fx.model.requests[0]?.body as { response_format?: unknown };
    expect(first.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'answer', schema: WEATHER, strict: true },
    });
    // The second turn says what was wrong with the first answer.
    const second = fx.model.requests[1]?.body.messages as Msg[];
    expect(second.at(-1)?.content).toContain("the answer's celsius is required");
    expect(fx.model.requests[1]?.body.response_format).toEqual(first.response_format);
  });

  it('reads an answer in one fenced JSON block, in code mode too', async () => {
    fx.model.push(reply({ content: '```json\n{"city":"Oslo","celsius":-3}\n```' }));
    const { task_id } = await fx.runtime.submit({ instruction: 'weather in Oslo', answerSchema: WEATHER });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toEqual({ city: 'Oslo', celsius: -3 });
  });

  it("feeds a code step's final_answer outside the schema back, and does not run its tool calls again", async () => {
    fx.model.push(
      reply({
        content: js('const p = await tools.get_price({ product: "tea" });\nfinal_answer({ city: "Paris" })'),
      }),
      reply({
        content: js(
          'const q = await tools.get_price({ product: "tea" });\nfinal_answer({ city: "Paris", celsius: q.cents / 10 })',
        ),
      }),
    );
    const calls = fx.calls.length;
    const { task_id } = await fx.runtime.submit({ instruction: 'weather in Paris', answerSchema: WEATHER });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toEqual({ city: 'Paris', celsius: 30 });
    // The second step said what was wrong with the first step's value.
    const second = fx.model.requests.at(-1)?.body.messages as Msg[];
    expect(second.at(-1)?.content).toContain(
      "final_answer(value): Your answer does not match the answer schema: the answer's celsius is required",
    );
    // The failed step's call was carried over to the retry (ADR 0034), not run a second time.
    expect(fx.calls.slice(calls).map((c) => c.name)).toEqual(['get_price']);
  });

  it('fails the task when the answers stay outside the schema past the retries', async () => {
    fx.model.push(reply({ content: 'It is sunny.' }), reply({ content: '[1]' }));
    const { task_id } = await fx.runtime.submit({
      instruction: 'weather',
      mode: 'function_calling',
      maxStepRetries: 1,
      answerSchema: WEATHER,
    });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('failed');
    expect(view.error?.code).toBe('MODEL_BAD_REPLY');
    expect(view.error?.message).toContain('does not match the answer schema');
  });

  it('refuses a bad schema at submit with INVALID_ARGUMENT naming answer_schema, storing nothing', async () => {
    const before = (await fx.runtime.list({})).tasks.length;
    const bad = [{ type: 'nope' }, { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } }];
    for (const answerSchema of bad) {
      await expect(fx.runtime.submit({ instruction: 'x', answerSchema })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field: 'answer_schema' },
      });
    }
    for (const answerSchema of [[1], 'x', { big: 'y'.repeat(70_000) }] as unknown as Record<
      string,
      unknown
    >[]) {
      await expect(fx.runtime.submit({ instruction: 'x', answerSchema })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field: 'answer_schema' },
      });
    }
    await expect(fx.runtime.submit({ code: 'return 1', answerSchema: WEATHER })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: 'answer_schema' },
    });
    expect((await fx.runtime.list({})).tasks.length).toBe(before);
  });
});

describe('agent, structured final answers (vLLM preset)', () => {
  const fx = useAgentFixture('agent-answer-schema-vllm', { model: { provider: 'vllm' } });

  it("sends the schema as vLLM's structured_outputs", async () => {
    fx.model.push(reply({ content: '{"city":"Rome","celsius":30}' }));
    const { task_id } = await fx.runtime.submit({
      instruction: 'weather in Rome',
      mode: 'function_calling',
      answerSchema: WEATHER,
    });
    const view = await fx.runtime.run(task_id);
    expect(view.result?.output).toEqual({ city: 'Rome', celsius: 30 });
    const body = fx.model.requests[0]?.body as { structured_outputs?: unknown; response_format?: unknown };
    expect(body.structured_outputs).toEqual({ json: WEATHER });
    expect(body.response_format).toBeUndefined();
  });
});

describe('agent, structured final answers with streamed validation (Ollama preset)', () => {
  const fx = useAgentFixture('agent-answer-schema-stream', {
    model: { provider: 'ollama', streamValidation: true },
  });

  it('stops a streamed answer at the first byte outside the schema and asks again', async () => {
    fx.model.push(
      {
        kind: 'sse',
        intervalMs: 40,
        // celsius must be a number: the grammar refuses the quote at byte 25.
        events: streamEvents({
          content: ['{"city":"Lima",', '"celsius":"', 'warm"}', ...Array.from({ length: 100 }, () => ' ')],
        }),
      },
      reply({ content: '{"city":"Lima","celsius":19}' }),
    );
    // No tools: the reply can only be the answer, so its text is held to the schema as it streams.
    const { task_id } = await fx.runtime.submit({
      instruction: 'weather in Lima',
      mode: 'function_calling',
      tools: [],
      answerSchema: WEATHER,
    });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toEqual({ city: 'Lima', celsius: 19 });
    await fx.model.streams[0]?.ended;
    expect(fx.model.streams[0]?.closedEarly).toBe(true);
    const second = fx.model.requests[1]?.body.messages as Msg[];
    expect(second.at(-1)?.content).toMatch(/at byte 25/);
  });
});

describe('agent, structured final answers: a streamed reply that may hold calls (Ollama preset)', () => {
  const fx = useAgentFixture('agent-answer-schema-stream-tools', {
    model: { provider: 'ollama', streamValidation: true },
  });

  it('is checked whole at its end and fed back (its text is not held to the schema while it streams)', async () => {
    fx.model.push(
      {
        kind: 'sse',
        intervalMs: 5,
        events: streamEvents({ content: ['{"city":"Lima",', '"celsius":"warm"}'] }),
      },
      reply({ content: '{"city":"Lima","celsius":19}' }),
    );
    const { task_id } = await fx.runtime.submit({
      instruction: 'weather in Lima',
      mode: 'function_calling',
      answerSchema: WEATHER,
    });
    const view = await fx.runtime.run(task_id);
    expect(view.result?.output).toEqual({ city: 'Lima', celsius: 19 });
    const second = fx.model.requests[1]?.body.messages as Msg[];
    expect(second.at(-1)?.content).toContain("the answer's celsius must be number");
  });
});
