import { describe, expect, it } from 'vitest';
import { compileProgram, GrammarMatcher, schemaToGrammar } from '../../src/grammar/index.ts';
import { alt, lit, ref, seq } from '../../src/grammar/ir.ts';
import { matches } from './feed.ts';

function matcherFor(schema: unknown): GrammarMatcher {
  return new GrammarMatcher(compileProgram(schemaToGrammar(schema).grammar));
}

function allowed(m: GrammarMatcher): string {
  const set = m.allowedBytes();
  let out = '';
  for (let b = 0; b < 256; b++) if (set[b >> 5]! & (1 << (b & 31))) out += String.fromCharCode(b);
  return out;
}

describe('GrammarMatcher', () => {
  it('says which bytes can come next, refuses the others without moving, and tells open from complete', () => {
    const m = matcherFor({
      type: 'object',
      properties: { ok: { type: 'boolean' } },
      required: ['ok'],
      additionalProperties: false,
    });
    expect(allowed(m)).toBe('{');
    expect(m.consume('x'.charCodeAt(0))).toBe(false);
    expect(m.position).toBe(0);
    expect(m.consumeBytes(Buffer.from('{"ok":'))).toBe(6);
    expect(allowed(m)).toBe('ft');
    expect(m.status()).toBe('open');
    m.consumeBytes(Buffer.from('true}'));
    expect(m.status()).toBe('complete');
    expect(m.isAccepting()).toBe(true);
  });

  it('rolls back and clones cheaply: a clone goes its own way', () => {
    const m = matcherFor({ enum: ['alpha', 'beta'] });
    m.consumeBytes(Buffer.from('"al'));
    const other = m.clone();
    m.rollback(2);
    expect(allowed(m)).toBe('ab');
    expect(other.consumeBytes(Buffer.from('pha"'))).toBe(4);
    expect(other.status()).toBe('complete');
    expect(m.consumeBytes(Buffer.from('beta"'))).toBe(5);
    expect(m.status()).toBe('complete');
    expect(() => m.rollback(99)).toThrow(RangeError);
  });

  it('accepts a number that may go on (accepting) and whitespace only under the flexible policy', () => {
    const m = matcherFor({ type: 'integer' });
    m.consumeBytes(Buffer.from('12'));
    expect(m.status()).toBe('accepting');
    const schema = { type: 'array', items: { type: 'integer' } };
    const flexible = compileProgram(schemaToGrammar(schema, { whitespace: 'flexible' }).grammar);
    const compact = compileProgram(schemaToGrammar(schema).grammar);
    expect(matches(flexible, ' [ 1 ,\n2 ] ')).toBe(true);
    expect(matches(compact, ' [ 1 ,\n2 ] ')).toBe(false);
    expect(matches(compact, '[1,2]')).toBe(true);
  });

  it('follows recursion through $ref and refuses a left-recursive schema with a stable code', () => {
    const tree = { $defs: { t: { type: 'array', items: { $ref: '#/$defs/t' } } }, $ref: '#/$defs/t' };
    expect(matches(compileProgram(schemaToGrammar(tree).grammar), '[[],[[[]]]]')).toBe(true);
    // A schema that is one of its own alternatives is a tail call: harmless, it adds nothing.
    expect(
      matches(compileProgram(schemaToGrammar({ anyOf: [{ $ref: '#' }, { type: 'null' }] }).grammar), 'null'),
    ).toBe(true);
    // A rule that calls itself before anything else and goes on after it: refused, with a stable code.
    const left = { root: 'r', rules: new Map([['r', alt(seq(ref('r'), lit('a')), lit('b'))]]) };
    expect(() => new GrammarMatcher(compileProgram(left))).toThrow(
      expect.objectContaining({ code: 'GRAMMAR_TOO_COMPLEX' }),
    );
  });

  it('bounds what hostile schemas cost: huge lengths are reported, huge grammars refused', () => {
    const { issues } = schemaToGrammar({ type: 'string', maxLength: 1e9 });
    expect(issues.map((i) => i.keyword)).toEqual(['maxLength']);
    const names = Array.from({ length: 20 }, (_, i) => `p${i}`);
    const properties = Object.fromEntries(names.map((n) => [n, { type: 'string', minLength: 9000 }]));
    const wide = { type: 'object', properties, required: names };
    expect(() => compileProgram(schemaToGrammar(wide).grammar, { maxStates: 100_000 })).toThrow(
      expect.objectContaining({ code: 'GRAMMAR_TOO_LARGE' }),
    );
  });

  it('reports what it cannot enforce, or refuses it in strict mode', () => {
    const schema = { type: 'array', uniqueItems: true, items: { not: { minimum: 1 } } };
    expect(schemaToGrammar(schema).issues.map((i) => [i.keyword, i.path])).toEqual([
      ['uniqueItems', '#'],
      ['not', '#/items'],
    ]);
    expect(() => schemaToGrammar(schema, { unsupported: 'error' })).toThrow(
      expect.objectContaining({ code: 'GRAMMAR_UNSUPPORTED' }),
    );
  });
});

describe('not', () => {
  it('enforces not {}, not { type } and not { required }, and reports any other', () => {
    const check = (schema: unknown, text: string) =>
      matches(compileProgram(schemaToGrammar(schema).grammar), text);
    expect(check({ not: {} }, 'null')).toBe(false);
    expect(check({ not: { type: ['string', 'null'] } }, '1')).toBe(true);
    expect(check({ not: { type: ['string', 'null'] } }, '"a"')).toBe(false);
    const eitherOr = {
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'integer' } },
      not: { required: ['a', 'b'] },
    };
    expect(schemaToGrammar(eitherOr).issues).toEqual([]);
    expect(check(eitherOr, '{"a":1}')).toBe(true);
    expect(check(eitherOr, '{"b":1}')).toBe(true);
    expect(check(eitherOr, '{"a":1,"b":2}')).toBe(false);
    // The extras cannot bring back a forbidden name.
    expect(check({ not: { required: ['x'] } }, '{"y":1,"x":2}')).toBe(false);
    expect(check({ not: { required: ['x'] } }, '{"y":1}')).toBe(true);
    expect(check({ not: { required: ['x'] } }, '3')).toBe(false);
    expect(schemaToGrammar({ not: { minimum: 3 } }).issues.map((i) => i.keyword)).toEqual(['not']);
  });
});

describe('additional keys', () => {
  it('cannot spell a declared name another way, escapes included', () => {
    const schema = { type: 'object', properties: { 'a/b': { type: 'integer' }, a: { type: 'integer' } } };
    const program = compileProgram(schemaToGrammar(schema).grammar);
    expect(matches(program, '{"a/b":1,"c":"x"}')).toBe(true);
    expect(matches(program, '{"a/b":1,"a\\/b":"x"}')).toBe(false);
    expect(matches(program, '{"a":1,"\\u0061":"x"}')).toBe(false);
    expect(matches(program, '{"a\\/c":"x","ab":[]}')).toBe(true);
  });

  it("take a universal pattern's schema, which the declared properties meet too", () => {
    const schema = {
      properties: { a: { type: 'integer' } },
      patternProperties: { '.*': { type: 'integer', minimum: 0 } },
    };
    expect(schemaToGrammar(schema).issues).toEqual([]);
    const program = compileProgram(schemaToGrammar(schema).grammar);
    expect(matches(program, '{"a":1,"b":2}')).toBe(true);
    expect(matches(program, '{"b":"x"}')).toBe(false);
    expect(matches(program, '{"a":-1}')).toBe(false);
  });
});
