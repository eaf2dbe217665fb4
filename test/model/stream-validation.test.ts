// Streamed replies validated as they come (ADR 0057): a real scripted server on loopback sends server-sent events
// slowly; at the first byte that cannot lead to a valid value the client aborts the request (the server sees the
// connection close before it sent everything) and the reply says where and what was expected.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAiClient } from '../../src/model/index.ts';
import type { ModelClient, ModelRequest } from '../../src/spec/index.ts';
import { reply, startScriptedModelServer, streamEvents } from './scripted-model-server.ts';
import type { ScriptedModelServer } from './scripted-model-server.ts';

const WEATHER = {
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } },
  required: ['city'],
};

const ask: ModelRequest = {
  messages: [{ role: 'user', content: 'weather in Paris?' }],
  tools: [{ name: 'get_weather', description: 'the weather', parameters: WEATHER }],
};

/** Enough filler after the bad byte that a client reading to the end would take seconds. */
const FILLER = Array.from({ length: 150 }, () => 'zz');
const SLOW_MS = 40;

describe('streamed replies validated by the grammar', () => {
  let server: ScriptedModelServer;
  let client: ModelClient;
  beforeEach(async () => {
    server = await startScriptedModelServer();
    client = createOpenAiClient({
      baseUrl: server.baseUrl,
      model: 'm',
      provider: 'ollama',
      retryBaseMs: 1,
      streamValidation: true,
    });
  });
  afterEach(async () => {
    await server.close();
  });

  it('stops a tool call at the first refused byte: the request is aborted, the reply says where', async () => {
    server.push({
      kind: 'sse',
      intervalMs: SLOW_MS,
      events: streamEvents({
        toolCall: { id: 'call_1', name: 'get_weather', pieces: ['{"city"', ':"Paris"', ',x', ...FILLER] },
      }),
    });
    const got = await client.complete(ask);
    expect(server.requests[0]?.body.stream).toBe(true);
    await server.streams[0]?.ended;
    expect(server.streams[0]?.closedEarly).toBe(true);
    expect(server.streams[0]?.sent).toBeLessThan(server.streams[0]?.total ?? 0);
    expect(got.violation).toEqual({
      code: 'GRAMMAR_REJECTED',
      toolCall: 0,
      position: 16,
      expected: [`'"'`],
      message: expect.stringMatching(
        /^expected '"' at byte 16 of the arguments of get_weather, got "x"/,
      ) as unknown,
    });
    expect(got.toolCalls).toEqual([{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris",x' }]);
    expect(got.finishReason).toBe('grammar_rejected');
  });

  it('names every byte that could have come: a closed object after its last property', async () => {
    const closed = { ...WEATHER, additionalProperties: false };
    server.push({
      kind: 'sse',
      intervalMs: SLOW_MS,
      events: streamEvents({ toolCall: { id: 'c', name: 'f', pieces: ['{"city":"Paris"', ']', ...FILLER] } }),
    });
    const got = await client.complete({
      ...ask,
      tools: [{ name: 'f', description: 'f', parameters: closed }],
    });
    expect(got.violation?.message).toMatch(
      /^expected one of ',', '}' at byte 15 of the arguments of f, got "]"/,
    );
    await server.streams[0]?.ended;
    expect(server.streams[0]?.closedEarly).toBe(true);
  });

  it('lets a valid reply through whole, keys in another order than declared included', async () => {
    server.push({
      kind: 'sse',
      events: streamEvents({
        toolCall: { id: 'c', name: 'get_weather', pieces: ['{"days"', ': 3, ', '"city": "Paris"}'] },
      }),
    });
    const got = await client.complete(ask);
    expect(got.violation).toBeUndefined();
    expect(got.toolCalls).toEqual([
      { id: 'c', name: 'get_weather', arguments: '{"days": 3, "city": "Paris"}' },
    ]);
    expect(got.finishReason).toBe('tool_calls');
    expect(server.streams[0]?.closedEarly).toBe(false);
  });

  it('holds a structured answer to its schema, and refuses one that ends unfinished', async () => {
    const request: ModelRequest = {
      messages: [{ role: 'user', content: 'a city' }],
      responseFormat: { name: 'city', schema: WEATHER },
    };
    server.push(
      { kind: 'sse', intervalMs: SLOW_MS, events: streamEvents({ content: ['{"city":', ' 42', ...FILLER] }) },
      { kind: 'sse', events: streamEvents({ content: ['{"city":"Pa'], finishReason: 'length' }) },
      { kind: 'sse', events: streamEvents({ content: ['{"city":"Paris","days":2}'] }) },
    );
    const wrongType = await client.complete(request);
    expect(wrongType.violation).toMatchObject({ position: 9, expected: [`'"'`] });
    expect(wrongType.violation?.toolCall).toBeUndefined();
    expect(wrongType.violation?.message).toMatch(/^expected '"' at byte 9 of the answer, got "4"/);
    const cut = await client.complete(request);
    expect(cut.violation?.message).toMatch(/at byte 11 of the answer; the answer ended there/);
    const fine = await client.complete(request);
    expect(fine.violation).toBeUndefined();
    expect(fine.content).toBe('{"city":"Paris","days":2}');
  });

  it('validates a server that answers one JSON body instead of a stream, after the fact', async () => {
    server.push(reply({ toolCalls: [{ id: 'c', name: 'get_weather', arguments: '{"city":7}' }] }));
    const got = await client.complete(ask);
    expect(got.violation).toMatchObject({ toolCall: 0, position: 8 });
  });

  it('asks for no stream when the request carries no schema, or validation is off', async () => {
    server.push(reply({ content: 'hi' }), reply({ content: 'hi' }));
    await client.complete({ messages: [{ role: 'user', content: 'hi' }] });
    const plain = createOpenAiClient({ baseUrl: server.baseUrl, model: 'm', provider: 'ollama' });
    await plain.complete(ask);
    expect(server.requests.map((r) => r.body.stream)).toEqual([false, false]);
  });
});
