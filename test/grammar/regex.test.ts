/**
 * The pattern compiler against the JavaScript engine: random strings over a small alphabet, each pattern's
 * grammar (as a JSON string's content) accepts exactly what `new RegExp(pattern, 'u').test` accepts.
 */
import { describe, expect, it } from 'vitest';
import { compileProgram, schemaToGrammar } from '../../src/grammar/index.ts';
import { integerRange, naturalRange } from '../../src/grammar/numbers.ts';
import { matches } from './feed.ts';

const PATTERNS = [
  '^a+b?$',
  'ab|cd',
  '^(ab|a)*c$',
  '^[^a\\-c]{2,3}$',
  '^\\d{2}-\\w+\\s?$',
  '^(?:a|b)+$',
  '^a.c$',
  '^(a|)(b|)$',
  '^[a-c]*:[^:]*$',
  '^(x(y|z)*w)?$',
  '"|\\\\',
  '^é+\\u00e9?$',
];
const ALPHABET = ['a', 'b', 'c', 'd', '-', '1', ':', ' ', 'x', 'y', 'z', 'w', '"', '\\', 'é', '\n', '_'];

function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

describe('patterns', () => {
  it('accept exactly what the JavaScript engine accepts', () => {
    const next = random(7);
    for (const pattern of PATTERNS) {
      const program = compileProgram(schemaToGrammar({ type: 'string', pattern }).grammar);
      const re = new RegExp(pattern, 'u');
      for (let i = 0; i < 400; i++) {
        let s = '';
        const length = Math.floor(next() * 6);
        for (let j = 0; j < length; j++) s += ALPHABET[Math.floor(next() * ALPHABET.length)];
        expect([pattern, s, matches(program, JSON.stringify(s))]).toEqual([pattern, s, re.test(s)]);
      }
    }
  });

  it('refuses what is not regular, with a report', () => {
    for (const pattern of ['(a)\\1', '(?=a)b', '\\bword']) {
      expect(schemaToGrammar({ type: 'string', pattern }).issues.map((i) => i.keyword)).toEqual(['pattern']);
    }
  });
});

describe('integer ranges', () => {
  it('hold exactly the integers of the range', () => {
    const cases: [bigint | null, bigint | null][] = [
      [0n, 0n],
      [7n, 123n],
      [-150n, -3n],
      [-20n, 1005n],
      [95n, null],
      [null, -7n],
      [null, 12n],
    ];
    for (const [lo, hi] of cases) {
      const program = compileProgram({ root: 'r', rules: new Map([['r', integerRange(lo, hi)]]) });
      for (let n = -1200; n <= 1200; n++) {
        const inside = (lo === null || BigInt(n) >= lo) && (hi === null || BigInt(n) <= hi);
        expect([lo, hi, n, matches(program, String(n))]).toEqual([lo, hi, n, inside]);
      }
      expect(matches(program, '007')).toBe(false);
    }
    expect(naturalRange(5n, 4n)).toEqual({ k: 'alt', items: [] });
  });

  it('bound numbers exactly for integer bounds, exclusive or not', () => {
    const program = compileProgram(
      schemaToGrammar({ type: 'number', exclusiveMinimum: -2, maximum: 3 }).grammar,
    );
    const cases: [string, boolean][] = [
      ['-2', false],
      ['-1.99', true],
      ['-2.0', false],
      ['-2.01', false],
      ['0', true],
      ['3', true],
      ['3.000', true],
      ['3.001', false],
      ['2.999', true],
      ['4', false],
    ];
    for (const [text, inside] of cases) expect([text, matches(program, text)]).toEqual([text, inside]);
  });
});
