// Sampling positions from the call marker's probability (the bigram completions server on loopback), and running
// sampled calls through codecall's tool path (the registry's host: lookup, schema validation, errors as data).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPromptLogprobsClient, type PromptLogprobsClient } from '../../src/model/index.ts';
import { callPositions, executeInlineCall, inlineArguments } from '../../src/toolformer/index.ts';
import { defineTool, ToolRegistry } from '../../src/tools/index.ts';
import { estimateBigram } from './bigram-model.ts';
import { startBigramServer, type BigramServer } from './bigram-completions-server.ts';

const model = estimateBigram(readFileSync(new URL('./fixtures/bigram-corpus.txt', import.meta.url), 'utf8'));

let server: BigramServer;
let client: PromptLogprobsClient;
beforeAll(async () => {
  server = await startBigramServer(model);
  client = createPromptLogprobsClient({ baseUrl: server.baseUrl, model: 'bigram', topLogprobs: 5 });
});
afterAll(async () => {
  await server.close();
});

describe('call positions', () => {
  const prompt = 'Your task is to add calls to a Calculator API to a piece of text.\nInput: ';
  const text = 'Out of 1400 participants, 400 (or 29%) passed the test.';

  it('are where the model would open a call: P([) at or above the threshold, the k likeliest', async () => {
    const scored = await client.promptLogprobs(prompt + text);
    const positions = callPositions(scored, prompt.length);
    // After " (or" the corpus opened a call once in its one sighting: P(" [Calculator(400/1400)" | " (or") =
    // (1 + 0.01) / (1 + 0.47). Everywhere else "[" is unlikely (at most 0.01 / 0.47 = 0.021 < 0.05).
    expect(positions).toHaveLength(1);
    expect(positions[0]?.at).toBe('Out of 1400 participants, 400 (or'.length);
    expect(positions[0]?.probability).toBeCloseTo(1.01 / 1.47, 10);
    expect(text.slice(positions[0]?.at)).toBe(' 29%) passed the test.');
    expect(callPositions(scored, prompt.length, { threshold: 0.7 })).toEqual([]);
    expect(callPositions(scored, prompt.length, { topK: 0 })).toEqual([]);
    expect(() => callPositions(scored, prompt.length, { threshold: 2 })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});

describe('executing sampled calls', () => {
  const calculator = defineTool({
    name: 'Calculator',
    description: 'Evaluates a / b',
    input: {
      type: 'object',
      properties: { expression: { type: 'string', pattern: '^\\d+/\\d+$' } },
      required: ['expression'],
    },
    effect: 'read',
    execute: ({ expression }: { expression: string }) => {
      const [a, b] = expression.split('/').map(Number) as [number, number];
      if (b === 0) throw new Error('division by zero');
      return Math.round((a / b) * 100) / 100;
    },
  });
  const lookup = defineTool({
    name: 'Lookup',
    description: 'Looks a word up',
    input: {
      type: 'object',
      properties: { word: { type: 'string' }, lang: { type: 'string' } },
      required: ['word'],
      additionalProperties: false,
    },
    effect: 'read',
    execute: ({ word }: { word: string }) => ({ word, meaning: `the meaning of ${word}` }),
  });
  const registry = new ToolRegistry([calculator, lookup]);

  it("runs a valid call and gives its result as text, the tool's arguments from the call's input", async () => {
    expect(await executeInlineCall(registry, { tool: 'Calculator', input: '400/1400' })).toEqual({
      ok: true,
      arguments: { expression: '400/1400' },
      result: '0.29',
    });
    expect(await executeInlineCall(registry, { tool: 'Lookup', input: '{"word":"steel"}' })).toEqual({
      ok: true,
      arguments: { word: 'steel' },
      result: '{"word":"steel","meaning":"the meaning of steel"}',
    });
  });

  it('drops a call its tool refuses, fails, or does not exist, with the code', async () => {
    const invalid = await executeInlineCall(registry, { tool: 'Calculator', input: '400 divided by 1400' });
    expect(invalid).toMatchObject({ ok: false, error: { code: 'TOOL_VALIDATION' } });
    const thrown = await executeInlineCall(registry, { tool: 'Calculator', input: '1/0' });
    expect(thrown).toMatchObject({
      ok: false,
      error: { code: 'TOOL_ERROR', message: expect.stringContaining('division by zero') as unknown },
    });
    // Not JSON and the schema takes no `input`: refused by the schema, not guessed at.
    const notJson = await executeInlineCall(registry, { tool: 'Lookup', input: 'steel' });
    expect(notJson).toMatchObject({ ok: false, error: { code: 'TOOL_VALIDATION' } });
    expect(await executeInlineCall(registry, { tool: 'Weather', input: 'Paris' })).toMatchObject({
      ok: false,
      error: { code: 'NO_SUCH_TOOL' },
    });
    expect(
      await executeInlineCall(registry, { tool: 'Lookup', input: '{"word":"x"}' }, { maxResultChars: 10 }),
    ).toMatchObject({
      ok: false,
      error: { code: 'INVALID_ARGUMENT' },
    });
    expect(inlineArguments(lookup, '{not json')).toEqual({ input: '{not json' });
  });
});
