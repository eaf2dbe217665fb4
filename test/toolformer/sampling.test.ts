// Sampling calls the paper's way against the bigram completions server on loopback (its sampled completions
// scripted): few-shot prompts, positions after the prompt, m calls per position stopped at `]`, malformed replies
// as MODEL_BAD_REPLY with the body kept, and the report's counts and SVG histogram.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCompletionsSampler, createPromptLogprobsClient } from '../../src/model/index.ts';
import {
  addShard,
  DEFAULT_FEW_SHOT_PROMPTS,
  deltaHistogramSvg,
  emptyReport,
  fewShotPrompt,
  promptTemplateFor,
  reportLines,
  sampleCallsAt,
  samplePositions,
  toolformerPipelineTools,
} from '../../src/toolformer/index.ts';
import { estimateBigram } from './bigram-model.ts';
import { startBigramServer, type BigramServer } from './bigram-completions-server.ts';

const model = estimateBigram(readFileSync(new URL('./fixtures/bigram-corpus.txt', import.meta.url), 'utf8'));
const text = 'Out of 1400 participants, 400 (or 29%) passed the test.';
const at = 'Out of 1400 participants, 400 (or'.length;
let script: (prompt: string) => string[] = () => [];
let server: BigramServer;
beforeAll(async () => {
  server = await startBigramServer(model, { complete: (prompt) => script(prompt) });
});
afterAll(async () => {
  await server.close();
});
const sampler = () => createCompletionsSampler({ baseUrl: server.baseUrl, model: 'bigram', maxRetries: 0 });

describe('few-shot prompts', () => {
  it("are word for word the paper's (appendix A.2), its x our {input}", () => {
    // The QA prompt as the paper prints it: one instruction line, two examples, then the text.
    expect(DEFAULT_FEW_SHOT_PROMPTS.QA).toBe(
      [
        'Your task is to add calls to a Question Answering API to a piece of text. The questions should help you get information required to complete the text. You can call the API by writing "[QA(question)]" where "question" is the question you want to ask. Here are some examples of API calls:',
        'Input: Joe Biden was born in Scranton, Pennsylvania.',
        'Output: Joe Biden was born in [QA("Where was Joe Biden born?")] Scranton, [QA("In which state is Scranton?")] Pennsylvania.',
        'Input: Coca-Cola, or Coke, is a carbonated soft drink manufactured by the Coca-Cola Company.',
        'Output: Coca-Cola, or [QA("What other name is Coca-Cola known by?")] Coke, is a carbonated soft drink manufactured by [QA("Who manufactures Coca-Cola?")] the Coca-Cola Company.',
        'Input: {input}',
        'Output: ',
      ].join('\n'),
    );
    const calculator = (DEFAULT_FEW_SHOT_PROMPTS.Calculator as string).split('\n');
    expect(calculator).toHaveLength(13);
    expect(calculator[0]).toBe(
      'Your task is to add calls to a Calculator API to a piece of text. The calls should help you get information required to complete the text. You can call the API by writing "[Calculator(expression)]" where "expression" is the expression to be computed. Here are some examples of API calls:',
    );
    // The paper's third example: its Output does not follow its Input, and is kept as printed.
    expect(calculator[5]).toContain('This is three times less than the 2169 goals last year.');
    expect(calculator[6]).toContain(
      'This is twenty goals more than the [Calculator(723 - 20)] 703 goals last year.',
    );
    expect(calculator.slice(-2)).toEqual(['Input: {input}', 'Output: ']);
  });

  it("are the paper's for Calculator and QA, a generic one naming any other tool, the text in the Input slot", () => {
    expect(DEFAULT_FEW_SHOT_PROMPTS.Calculator).toContain('[Calculator(2011 - 1994)] 17 years.');
    expect(DEFAULT_FEW_SHOT_PROMPTS.QA).toContain('[QA("Where was Joe Biden born?")]');
    expect(promptTemplateFor('Calculator', {})).toBe(DEFAULT_FEW_SHOT_PROMPTS.Calculator);
    expect(promptTemplateFor('Calculator', { prompts: { Calculator: 'mine {input}' } })).toBe('mine {input}');
    expect(promptTemplateFor('lookup.search', {}, 'Finds items')).toContain('"[lookup.search(input)]"');
    const prompt = fewShotPrompt(DEFAULT_FEW_SHOT_PROMPTS.Calculator as string, 'a\nb');
    expect(prompt.endsWith('Input: a b\nOutput: ')).toBe(true);
    expect(() => fewShotPrompt('no slot', 'x')).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() => fewShotPrompt('{input} {input}', 'x')).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});

describe('sampling', () => {
  it('reads positions after the few-shot prompt: P([) where the model would open a call', async () => {
    const client = createPromptLogprobsClient({ baseUrl: server.baseUrl, model: 'bigram', topLogprobs: 5 });
    const positions = await samplePositions(client, DEFAULT_FEW_SHOT_PROMPTS.Calculator as string, text);
    expect(positions.map((p) => p.at)).toEqual([at]);
    expect(positions[0]?.probability).toBeCloseTo(1.01 / 1.47, 10);
  });

  it('samples m calls at a position, stopping at ], each parsed as a call of the tool, the same input once', async () => {
    script = () => [
      'Calculator(400/1400)',
      'Calculator(400/1400) -> 12',
      'Calculator(1400/400)',
      'QA(who?)',
      'no call',
    ];
    const before = server.requests.length;
    const sampled = await sampleCallsAt(sampler(), 'P {input}\nO: ', text, at, 'Calculator', {
      callsPerPosition: 5,
    });
    expect(sampled.calls).toEqual([{ input: '400/1400' }, { input: '1400/400' }]);
    expect(sampled.bad).toEqual(['QA(who?)', 'no call']);
    const request = server.requests[before] as Record<string, unknown>;
    expect(request).toMatchObject({ n: 5, temperature: 1, stop: [']', '\n'], max_tokens: 64 });
    expect(request.prompt).toBe(`P ${text}\nO: Out of 1400 participants, 400 (or [`);
    expect(request.echo).toBeUndefined();
  });

  it('asks again for the rest when a server answers fewer choices than n (llama-cpp-python answers one)', async () => {
    let k = 0;
    script = () => [`Calculator(${++k}/7)`];
    const s = await startBigramServer(model, {
      complete: (prompt) => script(prompt),
      // One choice whatever n says.
      mangle: (body) => ({ ...body, choices: (body.choices as unknown[]).slice(0, 1) }),
    });
    try {
      const one = createCompletionsSampler({ baseUrl: s.baseUrl, model: 'bigram', provider: 'llamacpp' });
      const sampled = await sampleCallsAt(one, 'P {input}\nO: ', text, at, 'Calculator', {
        callsPerPosition: 3,
      });
      expect(sampled.calls).toHaveLength(3);
      expect(s.requests.map((r) => r.n)).toEqual([3, 2, 1]);
    } finally {
      await s.close();
    }
  });

  it('a malformed reply is MODEL_BAD_REPLY with its body kept, not an empty sample', async () => {
    script = () => [];
    const none = sampleCallsAt(sampler(), 'P {input}\nO: ', text, at, 'Calculator');
    await expect(none).rejects.toMatchObject({
      code: 'MODEL_BAD_REPLY',
      message: expect.stringContaining('no choices') as unknown,
      details: { body: expect.stringContaining('cmpl-scripted') as unknown },
    });
    const s = await startBigramServer(model, {
      complete: () => ['x'],
      mangle: (body) => ({ ...body, choices: [{ index: 0, logprobs: null }] }),
    });
    try {
      const bad = createCompletionsSampler({ baseUrl: s.baseUrl, model: 'bigram' });
      await expect(sampleCallsAt(bad, 'P {input}\nO: ', text, at, 'Calculator')).rejects.toMatchObject({
        code: 'MODEL_BAD_REPLY',
        message: expect.stringContaining('choice 0') as unknown,
      });
    } finally {
      await s.close();
    }
    await expect(sampleCallsAt(sampler(), 'P {input}', text, 0, 'Calculator')).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('a model server that cannot be reached makes a pipeline step TOOL_UNAVAILABLE in doubt (the task waits)', async () => {
    const s = await startBigramServer(model);
    const baseUrl = s.baseUrl;
    await s.close();
    const client = createPromptLogprobsClient({ baseUrl, model: 'bigram', maxRetries: 0 });
    const [positions] = toolformerPipelineTools({
      positionsClient: client,
      scoringClient: client,
      sampler: createCompletionsSampler({ baseUrl, model: 'bigram', maxRetries: 0 }),
      tools: [],
    });
    const run = positions?.execute({ tool: 'Calculator', text }, {
      signal: new AbortController().signal,
    } as never);
    await expect(run).rejects.toMatchObject({
      code: 'TOOL_UNAVAILABLE',
      details: { unreachable: 'in_doubt', model_code: 'MODEL_UNAVAILABLE' },
    });
  });
});

describe('the report', () => {
  it('sums counts per tool over shards and bins delta L, the tails in the end bins, as a plain SVG', () => {
    const report = emptyReport(1);
    const counts = {
      positions: 1,
      sampled: 3,
      executed: 2,
      scored: 2,
      kept: 1,
      dropped: { filter: 1, 'bad-call': 1 },
    };
    addShard(report, {
      lines: 2,
      counts: { Calculator: counts },
      kept: [],
      deltas: [
        ['Calculator', 1.2],
        ['Calculator', 0],
      ],
    });
    addShard(report, {
      lines: 1,
      counts: { Calculator: counts },
      kept: [],
      deltas: [
        ['Calculator', -40],
        ['Calculator', 99],
      ],
    });
    expect(report.lines).toBe(3);
    expect(report.counts.Calculator).toEqual({
      positions: 2,
      sampled: 6,
      executed: 4,
      scored: 4,
      kept: 2,
      dropped: { filter: 2, 'bad-call': 2 },
    });
    const bins = Object.fromEntries(report.histogram.bins);
    expect(bins[1]).toBe(1);
    expect(bins[0]).toBe(1);
    expect(bins[-5]).toBe(1);
    expect(bins[4.5]).toBe(1);
    const svg = deltaHistogramSvg(report);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain('4 scored, 2 kept');
    expect(reportLines(report)).toEqual([
      'Calculator: 2 positions, 6 sampled, 4 executed, 4 scored, 2 kept; dropped: filter 2, bad-call 2',
    ]);
  });
});
