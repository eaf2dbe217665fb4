// The completions API's echoed log-probabilities, read and cut to a continuation: request shapes per provider,
// offsets in code points, and malformed replies as clear errors (a real HTTP server on loopback).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createPromptLogprobsClient, type PromptLogprobsClientOptions } from '../../src/model/index.ts';
import { continuationLogprobs } from '../../src/toolformer/index.ts';
import { estimateBigram } from './bigram-model.ts';
import {
  startBigramServer,
  type BigramServer,
  type BigramServerOptions,
} from './bigram-completions-server.ts';

const model = estimateBigram(readFileSync(new URL('./fixtures/bigram-corpus.txt', import.meta.url), 'utf8'));

let server: BigramServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function clientOf(
  serverOptions: BigramServerOptions = {},
  options: Partial<PromptLogprobsClientOptions> = {},
): Promise<ReturnType<typeof createPromptLogprobsClient>> {
  server = await startBigramServer(model, serverOptions);
  return createPromptLogprobsClient({ baseUrl: server.baseUrl, model: 'bigram', retryBaseMs: 1, ...options });
}

const badReply: unknown = expect.objectContaining({ code: 'MODEL_BAD_REPLY' });

describe('the prompt log-probabilities client', () => {
  it("asks /completions for the echo with each provider's max_tokens", async () => {
    const vllm = await clientOf({ refuseZeroMaxTokens: true }, { topLogprobs: 3 });
    const scored = await vllm.promptLogprobs('The test was hard');
    expect(server?.requests).toEqual([
      {
        model: 'bigram',
        prompt: 'The test was hard',
        echo: true,
        logprobs: 3,
        max_tokens: 1,
        temperature: 0,
      },
    ]);
    // The one token vLLM must generate is cut off: only the prompt's tokens remain.
    expect(scored.tokens).toEqual(['The', ' test', ' was', ' hard']);
    expect(scored.offsets).toEqual([0, 3, 8, 12]);
    expect(scored.logprobs[0]).toBeNull();
    // "The" opens no line of the corpus ("\nThe" does): <unk>, never seen on the left, so 0.01 / (0 + 0.01 * 47).
    expect(scored.logprobs[1]).toBeCloseTo(Math.log(1 / 47), 12);
    // The top 3 and the token itself, as vLLM gives them (after <unk> all are equally likely: ties by token).
    expect(Object.keys(scored.top[1] ?? {})).toEqual(['\n', '\nA', '\nThe', ' test']);
    await server?.close();

    const openai = await clientOf({ refuseZeroMaxTokens: true }, { provider: 'openai' });
    // OpenAI's own protocol asks for no new token; a vLLM-like server refuses that, which the preset avoids.
    await expect(openai.promptLogprobs('The test')).rejects.toMatchObject({
      code: 'MODEL_REQUEST_INVALID',
      message: expect.stringContaining('max_tokens must be at least 1') as unknown,
    });
    expect(server?.requests[0]?.max_tokens).toBe(0);
  });

  it("says what to do when llama.cpp's own server refuses echo", async () => {
    const llamacpp = await clientOf({ refuseEcho: true }, { provider: 'llamacpp' });
    await expect(llamacpp.promptLogprobs('The test')).rejects.toMatchObject({
      code: 'MODEL_REQUEST_INVALID',
      message: expect.stringContaining("llama-cpp-python's server") as unknown,
    });
    expect(() =>
      createPromptLogprobsClient({ baseUrl: 'http://x/v1', model: 'm', provider: 'mistral' }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
  });

  it('maps text offsets from code points (Python) to UTF-16 indices', async () => {
    const client = await clientOf();
    const prompt = 'Sales 📈 grew 😀😀 fast';
    const scored = await client.promptLogprobs(prompt);
    expect(scored.tokens).toEqual(['Sales', ' 📈', ' grew', ' 😀😀', ' fast']);
    // Python's offsets are 0, 5, 7, 12, 15; in JavaScript each emoji is two units.
    expect(scored.offsets).toEqual([0, 5, 8, 13, 18]);
    scored.offsets.forEach((at, i) => expect(prompt.slice(at).startsWith(scored.tokens[i] ?? '')).toBe(true));
  });

  it('refuses malformed replies with MODEL_BAD_REPLY, without retrying them', async () => {
    type Lp = {
      tokens: unknown[];
      token_logprobs: unknown[];
      text_offset: unknown[];
      top_logprobs?: unknown;
    };
    const mangles: [string, (choice: { text: string; logprobs: Lp | null }) => void][] = [
      ['no logprobs', (c) => (c.logprobs = null)],
      ['fewer log-probabilities than tokens', (c) => c.logprobs?.token_logprobs.pop()],
      ['fewer offsets than tokens', (c) => c.logprobs?.text_offset.pop()],
      ['top_logprobs of another length', (c) => (c.logprobs!.top_logprobs = [null])],
      ['offsets out of order', (c) => c.logprobs?.text_offset.reverse()],
      ['an offset past the text', (c) => (c.logprobs!.text_offset[2] = 10_000)],
      ['a log-probability that is a string', (c) => (c.logprobs!.token_logprobs[2] = '-1.5')],
      ['an echo that is not the prompt', (c) => (c.text = 'something else')],
    ];
    for (const [what, mangle] of mangles) {
      const client = await clientOf(
        {
          mangle: (body) => {
            mangle((body.choices as [{ text: string; logprobs: Lp | null }])[0]);
            return body;
          },
        },
        { maxRetries: 2 },
      );
      await expect(client.promptLogprobs('The test was hard, and'), what).rejects.toThrow(badReply);
      expect(server?.requests, what).toHaveLength(1);
      await server?.close();
      server = undefined;
    }
    const notJson = await clientOf({ mangle: () => 'not json at all' });
    await expect(notJson.promptLogprobs('The test')).rejects.toThrow(badReply);
  });
});

describe('the continuation of a scored text', () => {
  it('is the tokens from its first character, by offset, to the end', async () => {
    const client = await clientOf();
    const text = 'The test was hard, and 29%) passed';
    const start = 'The test was hard, and'.length;
    const logprobs = continuationLogprobs(await client.promptLogprobs(text), start, text.length);
    expect(logprobs).toHaveLength(2);
    expect(logprobs[0]).toBeCloseTo(Math.log(1.01 / 2.47), 12); // c(" and", " 29%)") = 1, c(" and") = 2
    expect(logprobs[1]).toBeCloseTo(Math.log(2.01 / 2.47), 12); // c(" 29%)", " passed") = 2, c(" 29%)") = 2
  });

  it('must start on a token boundary, and be covered by tokens with log-probabilities', async () => {
    const client = await clientOf();
    const text = 'The test was hard, and29%) passed';
    const scored = await client.promptLogprobs(text);
    // " and29%)" is one token of this model: the continuation "29%) passed" starts inside it.
    expect(() => continuationLogprobs(scored, 'The test was hard, and'.length, text.length)).toThrow(
      expect.objectContaining({
        code: 'TOOLFORMER_TOKEN_BOUNDARY',
        message: expect.stringContaining('" and29%)"') as unknown,
      }),
    );
    const whole = 'The test was hard, and 29%) passed';
    const cut = await client.promptLogprobs(whole);
    const start = 'The test was hard, and'.length;
    const truncated = { ...cut, tokens: cut.tokens.slice(0, -1), offsets: cut.offsets.slice(0, -1) };
    expect(() => continuationLogprobs(truncated, start, whole.length)).toThrow(badReply);
    const short = { ...cut, tokens: cut.tokens.slice(0, 3), offsets: cut.offsets.slice(0, 3) };
    expect(() => continuationLogprobs(short, start, whole.length)).toThrow(
      expect.objectContaining({
        code: 'MODEL_BAD_REPLY',
        message: expect.stringContaining('do not cover') as unknown,
      }),
    );
    const holes = {
      ...cut,
      logprobs: cut.logprobs.map((lp, i) => (i === cut.logprobs.length - 1 ? null : lp)),
    };
    expect(() => continuationLogprobs(holes, start, whole.length)).toThrow(badReply);
  });
});
