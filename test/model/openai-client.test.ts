import { getEventListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import { createOpenAiClient, type OpenAiClientOptions } from '../../src/model/index.ts';
import type { ChatMessage, ModelClient } from '../../src/spec/index.ts';
import { describeModelClientConformance, failure } from '../conformance/model-client-conformance.ts';
import {
  reply,
  startScriptedModelServer,
  unusedPort,
  type ScriptedModelServer,
} from './scripted-model-server.ts';

describeModelClientConformance('openai', (baseUrl) =>
  createOpenAiClient({ baseUrl, model: 'test-model', apiKey: 'sk-test', retryBaseMs: 1 }),
);

function fixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
}

const ask: { messages: ChatMessage[] } = { messages: [{ role: 'user', content: 'weather in Paris?' }] };

describe('OpenAI-compatible client', () => {
  let server: ScriptedModelServer;
  beforeEach(async () => {
    server = await startScriptedModelServer();
  });
  afterEach(async () => {
    await server.close();
  });

  function client(options: Partial<OpenAiClientOptions> = {}): ModelClient {
    return createOpenAiClient({ baseUrl: server.baseUrl, model: 'test-model', retryBaseMs: 1, ...options });
  }

  describe('request shape', () => {
    it('posts model, messages with tool calls and results, tools, tool_choice and sampling options', async () => {
      server.push(reply({ content: 'done' }));
      await client({ apiKey: 'sk-test' }).complete({
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'u' },
          {
            role: 'assistant',
            content: null,
            toolCalls: [{ id: 'call_1', name: 'f', arguments: '{"x":1}' }],
          },
          { role: 'tool', toolCallId: 'call_1', content: '{"ok":true}' },
        ],
        tools: [{ name: 'f', description: 'does f', parameters: { type: 'object', properties: {} } }],
        toolChoice: 'required',
        temperature: 0.2,
        maxTokens: 256,
      });
      const request = server.requests[0];
      expect(request?.method).toBe('POST');
      expect(request?.path).toBe('/v1/chat/completions');
      expect(request?.headers.authorization).toBe('Bearer sk-test');
      expect(request?.headers['content-type']).toBe('application/json');
      expect(request?.body).toEqual({
        model: 'test-model',
        stream: false,
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'u' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' },
        ],
        tools: [
          {
            type: 'function',
            function: { name: 'f', description: 'does f', parameters: { type: 'object', properties: {} } },
          },
        ],
        tool_choice: 'required',
        temperature: 0.2,
        max_tokens: 256,
      });
    });

    it('sends a named tool choice as a function object and leaves out what was not asked for', async () => {
      server.push(reply({ content: 'a' }), reply({ content: 'b' }));
      const c = client({ baseUrl: `${server.baseUrl}/` });
      await c.complete({ ...ask, toolChoice: { name: 'f' } });
      await c.complete({ ...ask, toolChoice: 'none' });
      expect(server.requests[0]?.body.tool_choice).toEqual({ type: 'function', function: { name: 'f' } });
      expect(server.requests[1]?.body.tool_choice).toBe('none');
      expect(server.requests[0]?.headers.authorization).toBeUndefined();
      expect(Object.keys(server.requests[0]?.body ?? {}).sort()).toEqual([
        'messages',
        'model',
        'stream',
        'tool_choice',
      ]);
    });

    it('sends function.strict only for strict tools and only to providers that accept it', async () => {
      const tools = [
        // In the strict subset (closed, all required): one outside it goes non-strict (constraint-forms.test.ts).
        {
          name: 'f',
          description: 'does f',
          parameters: { type: 'object', properties: {}, additionalProperties: false },
          strict: true,
        },
        { name: 'g', description: 'does g', parameters: { type: 'object', properties: {} } },
      ];
      server.push(reply({ content: 'a' }), reply({ content: 'b' }), reply({ content: 'c' }));
      await client({ provider: 'openai' }).complete({ ...ask, tools });
      await client({ provider: 'mistral', apiKey: 'k' }).complete({ ...ask, tools });
      await client({ provider: 'vllm' }).complete({ ...ask, tools });
      const strictFlags = server.requests.map((request) =>
        (request.body.tools as { function: Record<string, unknown> }[]).map((tool) => tool.function.strict),
      );
      expect(strictFlags).toEqual([
        [true, undefined],
        [true, undefined],
        [undefined, undefined],
      ]);
    });
  });

  describe('recorded response shapes', () => {
    it('parses OpenAI parallel tool calls with string arguments', async () => {
      server.push({ kind: 'json', body: fixture('openai-tool-calls') });
      const got = await client().complete(ask);
      expect(got).toEqual({
        content: null,
        toolCalls: [
          { id: 'call_Xy7aQ2bLk9mN0pRsTuVw', name: 'get_weather', arguments: '{"city":"Paris"}' },
          {
            id: 'call_Zq1bR3cMl0nO2qStUvWx',
            name: 'get_weather',
            arguments: '{"city":"Lyon", "unit": "celsius"}',
          },
        ],
        finishReason: 'tool_calls',
        usage: { promptTokens: 82, completionTokens: 45 },
        model: 'gpt-4o-mini-2024-07-18',
      });
    });

    it('parses an OpenAI text reply', async () => {
      server.push({ kind: 'json', body: fixture('openai-text') });
      const got = await client().complete(ask);
      expect(got.content).toBe('It is 18 °C in Paris.');
      expect(got.toolCalls).toEqual([]);
      expect(got.usage).toEqual({ promptTokens: 140, completionTokens: 9 });
    });

    it('parses Mistral tool calls with object arguments and 9-character ids', async () => {
      server.push({ kind: 'json', body: fixture('mistral-tool-calls') });
      const got = await client({ provider: 'mistral', apiKey: 'k' }).complete(ask);
      expect(got.toolCalls).toEqual([
        { id: 'D681PevKs', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'Qm3Zt9LxA', name: 'get_weather', arguments: '{"city":"Lyon","unit":"celsius"}' },
      ]);
      expect(got.content).toBe('');
      expect(got.finishReason).toBe('tool_calls');
      expect(got.usage).toEqual({ promptTokens: 95, completionTokens: 25 });
      expect(got.model).toBe('mistral-small-latest');
    });

    it('joins Mistral text chunks into the content', async () => {
      server.push({ kind: 'json', body: fixture('mistral-text') });
      const got = await client({ provider: 'mistral', apiKey: 'k' }).complete(ask);
      expect(got.content).toBe('It is 18 °C in Paris.');
      expect(got.toolCalls).toEqual([]);
    });
  });

  describe('mistral quirks', () => {
    it('sends required as "any" and maps foreign tool-call ids alike in a call and its result', async () => {
      server.push(reply({ content: 'ok' }), reply({ content: 'ok' }));
      const request = {
        messages: [
          { role: 'user', content: 'u' },
          {
            role: 'assistant',
            content: null,
            toolCalls: [
              { id: 'call_Xy7aQ2bLk9mN0pRsTuVw', name: 'f', arguments: '{}' },
              { id: 'D681PevKs', name: 'f', arguments: '{}' },
            ],
          },
          { role: 'tool', toolCallId: 'D681PevKs', content: '2' },
          { role: 'tool', toolCallId: 'call_Xy7aQ2bLk9mN0pRsTuVw', content: '1' },
        ],
        toolChoice: 'required',
      } satisfies Parameters<ModelClient['complete']>[0];
      const mistral = client({ provider: 'mistral', apiKey: 'k' });
      await mistral.complete(request);
      await mistral.complete(request);
      const body = server.requests[0]?.body as {
        tool_choice: unknown;
        messages: { tool_calls?: { id: string }[]; tool_call_id?: string }[];
      };
      expect(body.tool_choice).toBe('any');
      const [mapped, kept] = body.messages[1]?.tool_calls?.map((c) => c.id) ?? [];
      expect(mapped).toMatch(/^[A-Za-z0-9]{9}$/);
      expect(kept).toBe('D681PevKs');
      expect(body.messages[2]?.tool_call_id).toBe('D681PevKs');
      expect(body.messages[3]?.tool_call_id).toBe(mapped);
      // The same ids map the same way in the next request (a replayed conversation).
      expect(server.requests[1]?.body.messages).toEqual(body.messages);
    });

    it('keeps ids as they are for OpenAI', async () => {
      server.push(reply({ content: 'ok' }));
      await client({ provider: 'openai' }).complete({
        messages: [{ role: 'tool', toolCallId: 'call_Xy7aQ2bLk9mN0pRsTuVw', content: '1' }],
        toolChoice: 'required',
      });
      expect(server.requests[0]?.body.tool_choice).toBe('required');
      expect(server.requests[0]?.body.messages).toEqual([
        { role: 'tool', tool_call_id: 'call_Xy7aQ2bLk9mN0pRsTuVw', content: '1' },
      ]);
    });
  });

  describe('retries', () => {
    // A backoff this long would outlast the deadline, so success proves the Retry-After was used.
    const noBackoff = { retryBaseMs: 1e9, maxRetryDelayMs: 1e9, timeoutMs: 20_000 };

    it('retries a 429 after its Retry-After in seconds and returns the answer', async () => {
      server.push(
        { kind: 'error', status: 429, headers: { 'retry-after': '0' }, body: { message: 'rate limited' } },
        reply({ content: 'after the wait' }),
      );
      const got = await client(noBackoff).complete(ask);
      expect(got.content).toBe('after the wait');
      expect(server.requests).toHaveLength(2);
      expect(server.requests[1]?.body).toEqual(server.requests[0]?.body);
    });

    it('honours a Retry-After given as an HTTP date', async () => {
      server.push(
        { kind: 'error', status: 429, headers: { 'retry-after': new Date(0).toUTCString() } },
        reply({ content: 'ok' }),
      );
      expect((await client(noBackoff).complete(ask)).content).toBe('ok');
      expect(server.requests).toHaveLength(2);
    });

    it('caps a long Retry-After', async () => {
      server.push(
        { kind: 'error', status: 503, headers: { 'retry-after': '3600' } },
        reply({ content: 'ok' }),
      );
      expect((await client({ maxRetryDelayMs: 0 }).complete(ask)).content).toBe('ok');
      expect(server.requests).toHaveLength(2);
    });

    it('retries a 500 and then succeeds', async () => {
      server.push(
        { kind: 'error', status: 500 },
        { kind: 'error', status: 502 },
        reply({ content: 'third time' }),
      );
      expect((await client().complete(ask)).content).toBe('third time');
      expect(server.requests).toHaveLength(3);
    });

    it('gives up with a retryable MODEL_UNAVAILABLE after maxRetries', async () => {
      server.push(
        { kind: 'error', status: 500, body: { error: { message: 'boom' } } },
        { kind: 'error', status: 500, body: { error: { message: 'boom' } } },
        reply({ content: 'too late' }),
      );
      const error = await failure(client({ maxRetries: 1 }).complete(ask));
      expect(error.code).toBe('MODEL_UNAVAILABLE');
      expect(error.retryable).toBe(true);
      expect(error.message).toContain('boom');
      expect(error.details).toMatchObject({ status: 500, attempts: 2 });
      expect(server.requests).toHaveLength(2);
    });

    it('does not retry a 400 and reports the provider message as MODEL_REQUEST_INVALID', async () => {
      server.push(
        {
          kind: 'error',
          status: 400,
          body: { object: 'error', message: 'Invalid model: nope', type: 'invalid_model' },
        },
        reply({ content: 'never' }),
      );
      const error = await failure(client().complete(ask));
      expect(error.code).toBe('MODEL_REQUEST_INVALID');
      expect(error.message).toContain('Invalid model: nope');
      expect(error.details).toMatchObject({ status: 400, message: 'Invalid model: nope' });
      expect(server.requests).toHaveLength(1);
    });

    it('names the URL a 404 came from and what the base URL most likely lacks', async () => {
      const bare = server.baseUrl.replace(/\/v1$/, '');
      const noVersion = await failure(client({ baseUrl: bare }).complete(ask));
      expect(noVersion.code).toBe('MODEL_REQUEST_INVALID');
      expect(noVersion.message).toBe(
        `the model server answered 404 (not found) to POST ${bare}/chat/completions: no route POST /chat/completions; ` +
          `the base URL usually ends in /v1: try ${bare}/v1 (e.g. http://127.0.0.1:8080/v1 for llama.cpp's llama-server)`,
      );
      expect(noVersion.details).toMatchObject({ status: 404, url: `${bare}/chat/completions` });
      // With its /v1 already, a 404 is more likely a model the server does not serve.
      server.push({ kind: 'error', status: 404, body: { error: { message: 'model "x" not found' } } });
      const withVersion = await failure(client().complete(ask));
      expect(withVersion.message).toContain(
        `to POST ${server.baseUrl}/chat/completions: model "x" not found;`,
      );
      expect(withVersion.message).toContain('and the model name');
      expect(server.requests).toHaveLength(2);
    });

    it('maps 403 to MODEL_AUTH without retrying', async () => {
      server.push({ kind: 'error', status: 403, body: { detail: 'forbidden' } }, reply({ content: 'never' }));
      const error = await failure(client().complete(ask));
      expect(error.code).toBe('MODEL_AUTH');
      expect(error.message).toContain('forbidden');
      expect(server.requests).toHaveLength(1);
    });
  });

  describe('unavailability', () => {
    it('fails with MODEL_UNAVAILABLE when nothing listens', async () => {
      const port = await unusedPort();
      const c = createOpenAiClient({
        baseUrl: `http://127.0.0.1:${port}/v1`,
        model: 'm',
        maxRetries: 1,
        retryBaseMs: 1,
      });
      const error = await failure(c.complete(ask));
      expect(error.code).toBe('MODEL_UNAVAILABLE');
      expect(error.retryable).toBe(true);
      expect(error.message).toContain(`127.0.0.1:${port}`);
    });

    it('fails with MODEL_UNAVAILABLE when the server does not answer in time', async () => {
      server.push({ kind: 'hang' });
      const error = await failure(client({ timeoutMs: 200 }).complete(ask));
      expect(error.code).toBe('MODEL_UNAVAILABLE');
      expect(error.details).toMatchObject({ timeoutMs: 200 });
    });

    it('waits for a slow reply within the deadline', async () => {
      server.push(reply({ content: 'slow but fine', delayMs: 50 }));
      expect((await client().complete(ask)).content).toBe('slow but fine');
    });

    it('aborts during a retry wait', async () => {
      server.push({ kind: 'error', status: 429, headers: { 'retry-after': '600' } });
      const controller = new AbortController();
      const pending = client({ maxRetryDelayMs: 600_000 }).complete(ask, { signal: controller.signal });
      await server.requestArrived(1);
      controller.abort();
      expect((await failure(pending)).code).toBe('ABORTED');
      expect(server.requests).toHaveLength(1);
    });
  });

  it("leaves no listener on a long-lived caller's signal once each request ends, and still follows it", async () => {
    // AbortSignal.any([caller, deadline]) hung one dependent per request on the caller's signal (a task's).
    const run = new AbortController();
    const model = client();
    for (let i = 0; i < 3; i++) {
      server.push(reply({ content: `r${i}` }));
      await model.complete(ask, { signal: run.signal });
    }
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
    const pending = model.complete(ask, { signal: run.signal });
    await server.requestArrived(4);
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
    run.abort(new Error('stop'));
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED' });
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
  });

  describe('long waits (issue 17 item 11)', () => {
    // Node runs a timer past 2^31-1 ms after 1 ms: a huge Retry-After (uncapped) retried at once, and a huge
    // deadline threw (AbortSignal.timeout) or fired at once.
    it.each([
      ['an uncapped Retry-After of 99999999 s', { maxRetryDelayMs: Infinity }],
      ['a deadline of 2^33 ms', { maxRetryDelayMs: Infinity, timeoutMs: 2 ** 33 }],
    ])('%s is waited for, not retried at once', async (_name, options) => {
      const warnings: Error[] = [];
      const onWarning = (w: Error): void => void warnings.push(w);
      process.on('warning', onWarning);
      try {
        for (let i = 0; i < 4; i++)
          server.push({ kind: 'error', status: 429, headers: { 'retry-after': '99999999' } });
        const controller = new AbortController();
        let settled = false;
        const pending = client(options).complete(ask, { signal: controller.signal });
        void pending.then(
          () => (settled = true),
          () => (settled = true),
        );
        await server.requestArrived(1);
        // A spinning client has sent its 3 retries by now (each 1 ms apart).
        await new Promise((r) => setTimeout(r, 500));
        expect(settled).toBe(false);
        expect(server.requests).toHaveLength(1);
        controller.abort();
        expect((await failure(pending)).code).toBe('ABORTED');
        expect(warnings.filter((w) => w.name === 'TimeoutOverflowWarning')).toEqual([]);
      } finally {
        process.off('warning', onWarning);
      }
    });
  });

  it('rejects an unusable config', () => {
    expect(() => createOpenAiClient({ baseUrl: '', model: 'm' })).toThrow(CodecallError);
    expect(() => createOpenAiClient({ baseUrl: 'http://x', model: 'm', maxRetries: -1 })).toThrow(
      /maxRetries/,
    );
  });
});
