import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import type { ModelClient } from '../../src/spec/index.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../model/scripted-model-server.ts';

/** Builds the client under test, pointed at the scripted server's OpenAI-compatible base URL. */
export type ModelClientFactory = (baseUrl: string) => ModelClient;

/** The CodecallError a promise rejects with (the test fails if it resolves or rejects with anything else). */
export async function failure(promise: Promise<unknown>): Promise<CodecallError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CodecallError);
  return error as CodecallError;
}

/** What every ModelClient must do against a server speaking the chat-completions protocol. */
export function describeModelClientConformance(name: string, create: ModelClientFactory): void {
  describe(`${name} model client conformance`, () => {
    let server: ScriptedModelServer;
    let client: ModelClient;
    beforeEach(async () => {
      server = await startScriptedModelServer();
      client = create(server.baseUrl);
    });
    afterEach(async () => {
      await server.close();
    });

    it('returns a text reply with its finish reason, usage and model', async () => {
      server.push(reply({ content: 'hello', model: 'm-1', usage: { prompt: 12, completion: 3 } }));
      const got = await client.complete({ messages: [{ role: 'user', content: 'hi' }] });
      expect(got).toEqual({
        content: 'hello',
        toolCalls: [],
        finishReason: 'stop',
        usage: { promptTokens: 12, completionTokens: 3 },
        model: 'm-1',
      });
      expect(server.requests).toHaveLength(1);
    });

    it('returns parallel tool calls in order with their arguments as JSON text', async () => {
      server.push(
        reply({
          toolCalls: [
            { id: 'a1', name: 'add', arguments: '{"a":1,"b":2}' },
            { id: 'a2', name: 'mul', arguments: { a: 3, b: 4 } },
          ],
        }),
      );
      const got = await client.complete({
        messages: [{ role: 'user', content: 'compute' }],
        tools: [{ name: 'add', description: 'adds', parameters: { type: 'object' } }],
      });
      expect(got.finishReason).toBe('tool_calls');
      expect(got.toolCalls.map((c) => c.name)).toEqual(['add', 'mul']);
      expect(JSON.parse(got.toolCalls[0]?.arguments ?? '')).toEqual({ a: 1, b: 2 });
      expect(JSON.parse(got.toolCalls[1]?.arguments ?? '')).toEqual({ a: 3, b: 4 });
      expect(new Set(got.toolCalls.map((c) => c.id)).size).toBe(2);
    });

    it('sends the conversation to the server', async () => {
      server.push(reply({ content: 'ok' }));
      await client.complete({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'question' },
        ],
      });
      const messages = server.requests[0]?.body.messages as { role: string; content: string }[];
      expect(messages.map((m) => [m.role, m.content])).toEqual([
        ['system', 'be brief'],
        ['user', 'question'],
      ]);
    });

    it('fails with MODEL_BAD_REPLY on a body that is not JSON', async () => {
      server.push({ kind: 'raw', body: '{"choices": [' });
      const error = await failure(client.complete({ messages: [{ role: 'user', content: 'x' }] }));
      expect(error.code).toBe('MODEL_BAD_REPLY');
    });

    it('fails with MODEL_BAD_REPLY on a reply without choices', async () => {
      server.push({ kind: 'json', body: { id: 'x', choices: [] } });
      const error = await failure(client.complete({ messages: [{ role: 'user', content: 'x' }] }));
      expect(error.code).toBe('MODEL_BAD_REPLY');
    });

    it('fails with MODEL_AUTH when the server refuses the key', async () => {
      server.push({ kind: 'error', status: 401, body: { error: { message: 'Incorrect API key provided' } } });
      const error = await failure(client.complete({ messages: [{ role: 'user', content: 'x' }] }));
      expect(error.code).toBe('MODEL_AUTH');
      expect(server.requests).toHaveLength(1);
    });

    it('fails with ABORTED when the signal fires while the server is silent', async () => {
      server.push({ kind: 'hang' });
      const controller = new AbortController();
      const pending = client.complete(
        { messages: [{ role: 'user', content: 'x' }] },
        { signal: controller.signal },
      );
      await server.requestArrived(1);
      controller.abort();
      expect((await failure(pending)).code).toBe('ABORTED');
    });

    it('fails with ABORTED at once for a signal already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      const error = await failure(
        client.complete({ messages: [{ role: 'user', content: 'x' }] }, { signal: controller.signal }),
      );
      expect(error.code).toBe('ABORTED');
    });
  });
}
