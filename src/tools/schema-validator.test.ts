import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CodecallError } from '../errors/index.ts';
import { defineTool } from './define-tool.ts';
import { SchemaValidator } from './schema-validator.ts';

describe('SchemaValidator', () => {
  const weather = defineTool({
    name: 'weather',
    description: 'weather',
    input: z.object({
      city: z.string(),
      days: z.number().int().optional(),
      opts: z.object({ units: z.enum(['c', 'f']) }).optional(),
    }),
    execute: () => null,
  });

  it('accepts a value matching the schema', () => {
    expect(new SchemaValidator().validate(weather.inputSchema, { city: 'Paris', days: 2 })).toBeNull();
  });

  it('names the offending field, empty for the value itself', () => {
    const validator = new SchemaValidator();
    const check = (value: unknown) => validator.validate(weather.inputSchema, value);
    expect(check({ city: 3 })).toEqual({ field: 'city', message: 'must be string' });
    expect(check({})).toEqual({ field: 'city', message: 'is required' });
    expect(check({ city: 'x', opts: { units: 'k' } })).toEqual({
      field: 'opts.units',
      message: 'must be equal to one of the allowed values',
    });
    expect(check({ city: 'x', extra: 1 })).toEqual({ field: 'extra', message: 'is not allowed' });
    expect(check([])).toEqual({ field: '', message: 'must be object' });
    const list = { type: 'array', items: { type: 'object', properties: { id: { type: 'number' } } } };
    expect(validator.validate(list, [{ id: 1 }, { id: 2 }, { id: 'x' }])).toEqual({
      field: '[2].id',
      message: 'must be number',
    });
  });

  it('compiles an equal schema with the same $id a second time (two tools, one shared Ajv)', () => {
    const validator = new SchemaValidator();
    const schema = () => ({
      $id: 'https://example.com/schemas/point',
      type: 'object',
      properties: { x: { type: 'number' }, next: { $ref: 'https://example.com/schemas/point' } },
      required: ['x'],
    });
    const first = schema();
    // The same schema written in another key order: a copy, not a different schema.
    const second = {
      required: ['x'],
      properties: { next: { $ref: 'https://example.com/schemas/point' }, x: { type: 'number' } },
      type: 'object',
      $id: 'https://example.com/schemas/point',
    };
    expect(validator.validate(first, { x: 1, next: { x: 2 } })).toBeNull();
    expect(validator.validate(second, { x: 1, next: { x: 'a' } })).toEqual({
      field: 'next.x',
      message: 'must be number',
    });
    expect(validator.validate(second, {})).toEqual({ field: 'x', message: 'is required' });
    // The process-wide instance the tool hosts use, with two copies of one tool's schema.
    expect(SchemaValidator.shared.validate(schema(), { x: 1 })).toBeNull();
    expect(SchemaValidator.shared.validate(schema(), { x: '1' })).toEqual({
      field: 'x',
      message: 'must be number',
    });
  });

  it('refuses a different schema under an $id already taken rather than sharing its validator', () => {
    const validator = new SchemaValidator();
    const id = 'https://example.com/schemas/thing';
    expect(validator.validate({ $id: id, type: 'string' }, 'a')).toBeNull();
    let error: CodecallError | undefined;
    try {
      validator.validate({ $id: id, type: 'number' }, 'a');
    } catch (e) {
      error = e as CodecallError;
    }
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining(id) as string });
    // The first schema still validates as itself.
    expect(validator.validate({ $id: id, type: 'string' }, 1)).toEqual({
      field: '',
      message: 'must be string',
    });
  });

  it('ignores $schema: a schema differing only in it is the same schema', () => {
    const validator = new SchemaValidator();
    const id = 'https://example.com/schemas/flag';
    expect(validator.validate({ $id: id, type: 'boolean' }, true)).toBeNull();
    const tagged = { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: id, type: 'boolean' };
    expect(validator.validate(tagged, 'no')).toEqual({ field: '', message: 'must be boolean' });
  });

  it.each<[string, string, boolean]>([
    ['^[a-z]+$', 'abc', true],
    ['^[a-z]+$', 'abC', false],
    ['\\d{3}-\\d{4}', 'call 555-1234 now', true],
    ['^\\p{L}+$', 'héllo', true],
    ['^(?<year>\\d{4})$', '2026', true],
    ['^[\\u0041-\\u005A]$', 'Q', true],
    ['/path', 'a/path', true],
    ['^(a+)+$', `${'a'.repeat(5000)}!`, false],
  ])(
    'matches pattern %s against %j in linear time as a JavaScript pattern would (%s)',
    (pattern, value, ok) => {
      const schema = { type: 'string', pattern };
      expect(new SchemaValidator().validate(schema, value) === null).toBe(ok);
    },
  );

  it.each(['(?=a)a', '^(?!x).*$', '(a)\\1', '(?<=a)b'])(
    'refuses a pattern RE2 cannot match in linear time (%s) when the schema compiles',
    (pattern) => {
      const refused = () => new SchemaValidator().compile({ type: 'string', pattern });
      expect(refused).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }) as Error);
      const keys = () =>
        new SchemaValidator().compile({ type: 'object', patternProperties: { [pattern]: {} } });
      expect(keys).toThrow(/not supported/);
    },
  );

  it('keeps each pattern apart (ajv caches compiled patterns by their text)', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'string', pattern: '^a$' }, b: { type: 'string', pattern: '^b$' } },
    };
    const validator = new SchemaValidator();
    expect(validator.validate(schema, { a: 'a', b: 'b' })).toBeNull();
    expect(validator.validate(schema, { a: 'a', b: 'a' })).toMatchObject({ field: 'b' });
  });
});
