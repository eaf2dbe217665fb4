// Scoring samples end to end against a language model whose every probability can be worked out by hand: a bigram
// model of fixtures/bigram-corpus.txt behind a completions server on loopback, answering as vLLM does.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPromptLogprobsClient, type PromptLogprobsClient } from '../../src/model/index.ts';
import { scoreSample, scoringTexts, type CandidateSample } from '../../src/toolformer/index.ts';
import { estimateBigram, SMOOTHING_K } from './bigram-model.ts';
import { startBigramServer, type BigramServer } from './bigram-completions-server.ts';

const model = estimateBigram(readFileSync(new URL('./fixtures/bigram-corpus.txt', import.meta.url), 'utf8'));

// The counts, read off the corpus by hand. 46 token types and <unk>: V = 47, k = 0.01, so k V = 0.47, and
// P(b | a) = (c(a, b) + 0.01) / (c(a) + 0.47). The continuation " 29%) passed the test." is 4 tokens, weighted
// 1, 0.8, 0.6, 0.4 (over 3, the sum of the paper's 5 weights).
//   c(" 0.29]") = 1, c(" 0.29]", " 29%)") = 1        P = 1.01 / 1.47   (the result, then the text that uses it)
//   c(" (or") = 1,   c(" (or", " 29%)") = 0          P = 0.01 / 1.47   (the corpus calls the calculator there)
//   c(" and") = 2,   c(" and", " 29%)") = 1          P = 1.01 / 2.47
//   " ]", " 4]": never seen, read as <unk>, c(<unk>) = 0: P = 0.01 / 0.47 = 1 / 47
//   c(" 29%)") = c(" passed") = c(" the") = 2, each always followed by the next word: P = 2.01 / 2.47
const V = 47;
const rest = -(0.8 + 0.6 + 0.4) * Math.log(2.01 / 2.47); // the last three tokens, the same after any prefix
const loss = (firstTokenProbability: number): number => (-Math.log(firstTokenProbability) + rest) / 3;

const useful: CandidateSample = {
  prefix: 'Out of 1400 participants, 400 (or',
  continuation: ' 29%) passed the test.',
  tool: 'Calculator',
  input: '400/1400',
  result: '0.29',
};
const useless: CandidateSample = {
  prefix: 'The test was hard, and',
  continuation: ' 29%) passed the test.',
  tool: 'Calculator',
  input: '2+2',
  result: '4',
};

let server: BigramServer;
let client: PromptLogprobsClient;
beforeAll(async () => {
  server = await startBigramServer(model, { refuseZeroMaxTokens: true });
  client = createPromptLogprobsClient({ baseUrl: server.baseUrl, model: 'bigram', provider: 'vllm' });
});
afterAll(async () => {
  await server.close();
});

describe('scoring samples with a bigram model', () => {
  it('reads the counts the comments above work with', () => {
    expect(model.vocabulary).toHaveLength(V);
    expect(SMOOTHING_K).toBe(0.01);
    expect([model.pairCount(' 0.29]', ' 29%)'), model.leftCount(' 0.29]')]).toEqual([1, 1]);
    expect([model.pairCount(' (or', ' 29%)'), model.leftCount(' (or')]).toEqual([0, 1]);
    expect([model.pairCount(' and', ' 29%)'), model.leftCount(' and')]).toEqual([1, 2]);
    expect([model.leftCount(' ]'), model.leftCount(' 4]')]).toEqual([0, 0]);
    for (const [a, b] of [
      [' 29%)', ' passed'],
      [' passed', ' the'],
      [' the', ' test.'],
    ] as const) {
      expect([model.pairCount(a, b), model.leftCount(a)]).toEqual([2, 2]);
    }
  });

  it('scores the three texts of a sample: no call, the call with an empty result, the call with its result', () => {
    const texts = scoringTexts(useful);
    expect(texts.noCall.text).toBe('Out of 1400 participants, 400 (or 29%) passed the test.');
    expect(texts.same.text).toBe(
      'Out of 1400 participants, 400 (or [Calculator(400/1400) -> ] 29%) passed the test.',
    );
    expect(texts.call.text).toBe(
      'Out of 1400 participants, 400 (or [Calculator(400/1400) -> 0.29] 29%) passed the test.',
    );
    for (const { text, start } of Object.values(texts)) expect(text.slice(start)).toBe(useful.continuation);
  });

  it('keeps a calculator call whose result the text goes on to use', async () => {
    const before = server.requests.length;
    const scored = await scoreSample(client, useful);
    expect(server.requests.length - before).toBe(3);
    expect(scored.losses.noCall).toBeCloseTo(loss(0.01 / 1.47), 10);
    expect(scored.losses.same).toBeCloseTo(loss(1 / V), 10);
    expect(scored.losses.call).toBeCloseTo(loss(1.01 / 1.47), 10);
    // min(L_no_call, L_same) = L_same; delta = ln(47 * 1.01 / 1.47) / 3 = 1.158
    expect(scored.delta).toBeCloseTo(Math.log((V * 1.01) / 1.47) / 3, 10);
    expect(scored.delta).toBeCloseTo(1.158, 3);
    expect(scored.keep).toBe(true);
  });

  it('drops a call that tells the text nothing it did not know', async () => {
    const scored = await scoreSample(client, useless);
    expect(scored.losses.noCall).toBeCloseTo(loss(1.01 / 2.47), 10);
    expect(scored.losses.same).toBeCloseTo(loss(1 / V), 10);
    expect(scored.losses.call).toBeCloseTo(loss(1 / V), 10);
    // min(L_no_call, L_same) = L_no_call; delta = -ln(47 * 1.01 / 2.47) / 3 = -0.985
    expect(scored.delta).toBeCloseTo(-Math.log((V * 1.01) / 2.47) / 3, 10);
    expect(scored.keep).toBe(false);
  });

  it('follows tau, and finds the continuation after text with characters beyond the BMP', async () => {
    expect((await scoreSample(client, useful, { tau: 1.2 })).keep).toBe(false);
    // Python's offsets count the emoji once; the continuation is found all the same, with the same losses.
    const emoji = await scoreSample(client, { ...useful, prefix: 'Sales 📈 grew 📈📈: 400 (or' });
    expect(emoji.delta).toBeCloseTo(Math.log((V * 1.01) / 1.47) / 3, 10);
  });

  it('fails the sample with a stable code when the text splits inside a token, or a reply is malformed', async () => {
    await expect(
      scoreSample(client, { ...useful, continuation: '29%) passed the test.' }),
    ).rejects.toMatchObject({
      code: 'TOOLFORMER_TOKEN_BOUNDARY',
    });
    const broken = await startBigramServer(model, {
      mangle: (body) => ({ ...body, choices: [{ text: 'x', logprobs: null }] }),
    });
    try {
      const brokenClient = createPromptLogprobsClient({ baseUrl: broken.baseUrl, model: 'bigram' });
      await expect(scoreSample(brokenClient, useful)).rejects.toMatchObject({ code: 'MODEL_BAD_REPLY' });
    } finally {
      await broken.close();
    }
    await expect(scoreSample(client, { ...useful, prefix: '' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});
