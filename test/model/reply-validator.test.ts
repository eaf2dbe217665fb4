// The validator of a streamed value (ADR 0057) on its own: the grammar's refusals with what was expected, keys in
// another order than declared (syntax only from there), and the bound past which only the syntax is checked.
import { describe, expect, it } from 'vitest';
import { MAX_GRAMMAR_BYTES, ReplyValidator } from '../../src/model/reply-validator.ts';
import type { JsonSchema } from '../../src/spec/index.ts';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function run(schema: JsonSchema | null, text: string, maxGrammarBytes?: number) {
  const validator = new ReplyValidator(schema, maxGrammarBytes === undefined ? {} : { maxGrammarBytes });
  return validator.push(bytes(text)) ?? validator.end();
}

describe('ReplyValidator', () => {
  const schema = {
    type: 'object',
    properties: { a: { type: 'integer' }, b: { type: 'array', items: { type: 'boolean' } } },
    required: ['a'],
    additionalProperties: false,
  };

  it('takes valid values, whitespace and keys in another order included', () => {
    expect(run(schema, '{"a":1,"b":[true,false]}')).toBeNull();
    expect(run(schema, '{\n  "a": 1,\n  "b": [ true ]\n}')).toBeNull();
    expect(run(schema, '{"b":[true],"a":2}')).toBeNull();
  });

  it('refuses at the first byte no valid value can follow, saying what could', () => {
    expect(run(schema, '{"a":"1"}')).toEqual({ position: 5, expected: ["'-'", "'0'-'9'"], got: '"' });
    expect(run(schema, '{"a":1,"b":[tru]}')).toMatchObject({ position: 15, expected: ["'e'"] });
    // After a key the grammar refuses but JSON takes (another order, or an unknown key), only the syntax is held:
    // `[1]` is JSON, so it passes here and the tool host's ajv refuses it when the value is whole.
    expect(run(schema, '{"b":[1]}')).toBeNull();
    expect(run(schema, '{"b":[true],"a":2,}')).toMatchObject({ position: 18, expected: [`'"'`], got: '}' });
    expect(run(schema, '{"a":1')).toMatchObject({ position: 6, got: null });
  });

  it('checks plain syntax once past the grammar bound (a hostile value must not grow the matcher)', () => {
    expect(MAX_GRAMMAR_BYTES).toBe(1024 * 1024);
    const bound = 1000; // the same code path as the 1 MiB default, quicker
    const long = 'x'.repeat(bound + 10);
    const strings = { type: 'object', properties: { s: { type: 'string' }, n: { type: 'integer' } } };
    expect(run(strings, `{"s":"${long}"}`, bound)).toBeNull();
    expect(run(strings, `{"s":"${long}" x}`, bound)).toEqual({
      position: bound + 18,
      expected: ["','", "'}'"],
      got: 'x',
    });
    // Past the bound a wrong type is no longer seen (the tool host's ajv refuses it when the value is whole).
    expect(run(strings, `{"s":"${long}","n":"1"}`, bound)).toBeNull();
    expect(run(strings, '{"s":"x","n":"1"}', bound)).toMatchObject({ position: 13 });
  });

  it('checks nothing for a schema the grammar compiler refuses, and holds nothing for a null schema', () => {
    expect(new ReplyValidator({ type: 'object', properties: { a: 5 } }).active).toBe(false);
    expect(run(null, 'not json')).toBeNull();
  });
});
