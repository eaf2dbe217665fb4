import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromStrictArguments, functionTools, strictSchema } from '../../src/agent/index.ts';
import type { JsonSchema, ToolDefinition } from '../../src/spec/index.ts';
import { SchemaValidator, defineTool } from '../../src/tools/index.ts';

function tool(namespace: string, name: string, inputSchema: JsonSchema = { type: 'object' }): ToolDefinition {
  return {
    namespace,
    name,
    description: `${namespace}.${name}`,
    inputSchema,
    effect: 'read',
    requiresApproval: false,
    execute: () => null,
  };
}

function names(tools: readonly ToolDefinition[]): string[] {
  return functionTools(tools).map((t) => t.spec.name);
}

const validator = SchemaValidator.shared;

function violation(schema: JsonSchema, value: unknown): string | null {
  const bad = validator.validate(schema, value);
  return bad === null ? null : `${bad.field || '(value)'} ${bad.message}`;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** Asserts OpenAI's strict rules on a schema this module produced. */
function expectStrictRules(schema: unknown, path = '#'): void {
  if (Array.isArray(schema)) {
    schema.forEach((s, i) => expectStrictRules(s, `${path}/${i}`));
    return;
  }
  if (typeof schema !== 'object' || schema === null) return;
  const s = schema as Record<string, unknown>;
  for (const banned of [
    'default',
    'examples',
    '$schema',
    'oneOf',
    'allOf',
    'minLength',
    'maxLength',
    'const',
  ]) {
    expect(s, `${path} has ${banned}`).not.toHaveProperty(banned);
  }
  if ('properties' in s) {
    expect(s.additionalProperties, `${path} additionalProperties`).toBe(false);
    expect(s.required, `${path} required`).toEqual(Object.keys(s.properties as object));
  }
  if (s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object'))) {
    expect(s, `${path} properties`).toHaveProperty('properties');
  }
  if ('$ref' in s) expect(Object.keys(s), `${path} $ref siblings`).toEqual(['$ref']);
  for (const [key, value] of Object.entries(s)) {
    if (key !== 'enum' && key !== 'required') expectStrictRules(value, `${path}/${key}`);
  }
}

function strict(schema: JsonSchema): JsonSchema {
  const out = strictSchema(deepFreeze(schema));
  expect(out).not.toBeNull();
  expectStrictRules(out);
  validator.compile(out as JsonSchema); // a valid schema for ajv too
  return out as JsonSchema;
}

describe('functionTools: names', () => {
  it('uses the bare name in the default namespace and namespace__name elsewhere', () => {
    expect(names([tool('tools', 'get_weather'), tool('github', 'search'), tool('db', 'get-row')])).toEqual([
      'get_weather',
      'github__search',
      'db__get-row',
    ]);
  });

  it('replaces characters outside [a-zA-Z0-9_-] with "_"', () => {
    expect(names([tool('tools', 'get$weather'), tool('my.ns', 'a b'), tool('tools', 'café')])).toEqual([
      'get_weather',
      'my_ns__a_b',
      'caf_',
    ]);
    expect(names([tool('tools', '')])).toEqual(['tool']);
  });

  it('cuts names to 64 characters', () => {
    const long = tool('n'.repeat(40), 'x'.repeat(40));
    const [name] = names([long]);
    expect(name).toBe(`${'n'.repeat(40)}__${'x'.repeat(22)}`);
    expect(name).toHaveLength(64);
  });

  it('gives colliding names a numeric suffix, the unchanged name keeping its own', () => {
    expect(names([tool('tools', 'x$y'), tool('tools', 'x_y'), tool('tools', 'x.y')])).toEqual([
      'x_y_2',
      'x_y',
      'x_y_3',
    ]);
  });

  it('never hands out a suffixed name that another tool has as its own', () => {
    // `f$` and `f_` both want `f_`; `f__2` is taken by a tool of that name, so the loser gets `f__3`.
    expect(names([tool('tools', 'f$'), tool('tools', 'f_'), tool('tools', 'f__2')])).toEqual([
      'f__3',
      'f_',
      'f__2',
    ]);
  });

  it('keeps suffixed names within 64 characters', () => {
    const a = tool('tools', `${'a'.repeat(64)}1`);
    const b = tool('tools', `${'a'.repeat(64)}2`);
    expect(names([b, a])).toEqual([`${'a'.repeat(62)}_2`, 'a'.repeat(64)]);
  });

  it('is deterministic and independent of the order of the tools', () => {
    const part = fc.string({ maxLength: 40 });
    const pairs = fc.uniqueArray(fc.tuple(part, part), {
      maxLength: 12,
      selector: ([ns, n]) => `${ns}\u0000${n}`,
    });
    fc.assert(
      fc.property(pairs, fc.infiniteStream(fc.nat()), (list, randoms) => {
        const tools = list.map(([ns, n]) => tool(ns === '' ? 'tools' : ns, n));
        const got = names(tools);
        expect(new Set(got).size).toBe(got.length);
        for (const name of got) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
        const order = tools.map((t, i) => ({ t, i, r: randoms.next().value as number }));
        order.sort((x, y) => x.r - y.r || x.i - y.i);
        const shuffled = names(order.map((o) => o.t));
        order.forEach((o, k) => expect(shuffled[k]).toBe(got[o.i]));
        expect(names(tools)).toEqual(got);
      }),
    );
  });
});

describe('functionTools: specs', () => {
  const weather = tool('tools', 'weather', {
    type: 'object',
    properties: { city: { type: 'string' }, units: { type: 'string', enum: ['c', 'f'] } },
    required: ['city'],
  });
  const freeForm = tool('tools', 'anything', { type: 'object' });

  it('sends the input schema as is, without strict, by default', () => {
    const [fn] = functionTools([weather]);
    expect(fn?.spec).toEqual({
      name: 'weather',
      description: 'tools.weather',
      parameters: weather.inputSchema,
    });
    expect(fn?.spec).not.toHaveProperty('strict');
    expect(fn?.tool).toBe(weather);
  });

  it('sends strict variants with strict: true when asked, and non-strict tools as they are', () => {
    const [a, b] = functionTools([weather, freeForm], { strict: true });
    expect(a?.spec.strict).toBe(true);
    expect(a?.spec.parameters).toEqual(strictSchema(weather.inputSchema));
    expect(b?.spec).toEqual({
      name: 'anything',
      description: 'tools.anything',
      parameters: { type: 'object' },
    });
  });
});

describe('strictSchema', () => {
  it('closes objects, requires every property and makes the optional ones nullable', () => {
    expect(
      strict({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        description: 'args',
        properties: {
          city: { type: 'string', description: 'the city', minLength: 1, examples: ['Paris'] },
          units: { type: 'string', enum: ['c', 'f'], default: 'c' },
          days: { type: 'integer', minimum: 1, maximum: 7 },
          exact: { type: 'boolean' },
        },
        required: ['city'],
      }),
    ).toEqual({
      type: 'object',
      description: 'args',
      properties: {
        city: { type: 'string', description: 'the city' },
        units: { type: ['string', 'null'], enum: ['c', 'f', null] },
        days: { type: ['integer', 'null'], minimum: 1, maximum: 7 },
        exact: { type: ['boolean', 'null'] },
      },
      required: ['city', 'units', 'days', 'exact'],
      additionalProperties: false,
    });
  });

  it('handles nested objects and arrays of objects at every level', () => {
    const got = strict({
      type: 'object',
      properties: {
        filter: {
          type: 'object',
          properties: { tag: { type: 'string' }, min: { type: 'number' } },
          required: ['tag'],
        },
        items: {
          type: 'array',
          maxItems: 3,
          uniqueItems: true,
          items: {
            type: 'object',
            properties: { id: { type: 'string' }, note: { type: 'string' } },
            required: ['id'],
          },
        },
      },
      required: ['items'],
    });
    expect(got).toEqual({
      type: 'object',
      properties: {
        filter: {
          anyOf: [
            {
              type: 'object',
              properties: { tag: { type: 'string' }, min: { type: ['number', 'null'] } },
              required: ['tag', 'min'],
              additionalProperties: false,
            },
            { type: 'null' },
          ],
        },
        items: {
          type: 'array',
          maxItems: 3,
          items: {
            type: 'object',
            properties: { id: { type: 'string' }, note: { type: ['string', 'null'] } },
            required: ['id', 'note'],
            additionalProperties: false,
          },
        },
      },
      required: ['filter', 'items'],
      additionalProperties: false,
    });
  });

  it('keeps optional properties that already accept null as they are', () => {
    const got = strict({
      type: 'object',
      properties: {
        a: { type: ['string', 'null'] },
        b: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null },
        c: { enum: ['x', null] },
      },
    });
    expect(got.properties).toEqual({
      a: { type: ['string', 'null'] },
      b: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      c: { type: ['string', 'null'], enum: ['x', null] },
    });
  });

  it('turns const into a one-value enum, infers missing types, and oneOf into anyOf', () => {
    const got = strict({
      type: 'object',
      properties: {
        kind: { const: 'circle' },
        size: { enum: [1, 2, 3] },
        shape: { oneOf: [{ type: 'string' }, { type: 'number' }] },
        opt: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
      },
      required: ['kind', 'size', 'shape'],
    });
    expect(got.properties).toEqual({
      kind: { type: 'string', enum: ['circle'] },
      size: { type: 'number', enum: [1, 2, 3] },
      shape: { anyOf: [{ type: 'string' }, { type: 'number' }] },
      opt: { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'null' }] },
    });
  });

  it('keeps the documented formats and pattern, drops other formats', () => {
    const got = strict({
      type: 'object',
      properties: {
        when: { type: 'string', format: 'date-time' },
        mail: { type: 'string', format: 'email', pattern: '^.+@.+$' },
        site: { type: 'string', format: 'uri' },
      },
      required: ['when', 'mail', 'site'],
    });
    expect(got.properties).toEqual({
      when: { type: 'string', format: 'date-time' },
      mail: { type: 'string', format: 'email', pattern: '^.+@.+$' },
      site: { type: 'string' },
    });
  });

  it('keeps $refs and $defs, recursion included, and wraps optional refs in anyOf with null', () => {
    const got = strict({
      type: 'object',
      properties: {
        root: { $ref: '#/$defs/node' },
        spare: { $ref: '#/$defs/node' },
        self: { $ref: '#' },
      },
      required: ['root'],
      $defs: {
        node: {
          type: 'object',
          properties: { v: { type: 'string' }, kids: { type: 'array', items: { $ref: '#/$defs/node' } } },
          required: ['v'],
        },
      },
    });
    expect(got).toEqual({
      type: 'object',
      properties: {
        root: { $ref: '#/$defs/node' },
        spare: { anyOf: [{ $ref: '#/$defs/node' }, { type: 'null' }] },
        self: { anyOf: [{ $ref: '#' }, { type: 'null' }] },
      },
      required: ['root', 'spare', 'self'],
      additionalProperties: false,
      $defs: {
        node: {
          type: 'object',
          properties: {
            v: { type: 'string' },
            kids: { anyOf: [{ type: 'array', items: { $ref: '#/$defs/node' } }, { type: 'null' }] },
          },
          required: ['v', 'kids'],
          additionalProperties: false,
        },
      },
    });
  });

  it('inlines a $ref that has a description next to it, and a single-schema allOf', () => {
    const got = strict({
      type: 'object',
      properties: {
        home: { $ref: '#/definitions/place', description: 'where you live' },
        work: { allOf: [{ $ref: '#/definitions/place' }], title: 'Work' },
      },
      required: ['home', 'work'],
      definitions: {
        place: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    });
    const place = {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    };
    expect(got.properties).toEqual({
      home: { description: 'where you live', ...place },
      work: { title: 'Work', ...place },
    });
    expect(got.definitions).toEqual({ place });
  });

  it('makes the JSON Schema of a zod tool strict', () => {
    const t = defineTool({
      name: 'search',
      description: 'search',
      input: z.object({
        query: z.string().min(1).describe('what to look for'),
        limit: z.number().int().optional(),
        sort: z.enum(['new', 'top']).optional(),
        filter: z.object({ lang: z.string().nullable().optional(), kind: z.literal('repo') }).optional(),
      }),
      execute: () => [],
    });
    const got = strict(t.inputSchema);
    expect(got.required).toEqual(['query', 'limit', 'sort', 'filter']);
    expect(got.properties).toMatchObject({
      query: { type: 'string', description: 'what to look for' },
      limit: { type: ['integer', 'null'] },
      sort: { type: ['string', 'null'], enum: ['new', 'top', null] },
    });
  });

  it('accepts an empty parameter list', () => {
    expect(strict({ type: 'object', properties: {} })).toEqual({
      type: 'object',
      properties: {},
      required: [],
      additionalProperties: false,
    });
    expect(strict({ type: 'object', additionalProperties: false })).toEqual({
      type: 'object',
      properties: {},
      required: [],
      additionalProperties: false,
    });
  });

  const nested = (child: unknown): JsonSchema => ({
    type: 'object',
    properties: { x: child },
    required: ['x'],
  });

  it.each<[string, JsonSchema]>([
    ['a root that is not an object', { type: 'array', items: { type: 'string' } }],
    ['a root union', { anyOf: [{ type: 'object', properties: {} }] }],
    ['a root $ref', { $ref: '#/$defs/a', $defs: { a: { type: 'object', properties: {} } } }],
    ['a free-form root', { type: 'object' }],
    ['a free-form nested object', nested({ type: 'object' })],
    ['additionalProperties: true', { type: 'object', properties: {}, additionalProperties: true }],
    [
      'additionalProperties as a schema',
      nested({ type: 'object', additionalProperties: { type: 'number' } }),
    ],
    ['patternProperties', nested({ type: 'object', properties: {}, patternProperties: { '^a': {} } })],
    ['required naming an undeclared property', { type: 'object', properties: {}, required: ['ghost'] }],
    ['an untyped property', nested({})],
    ['a true schema', nested(true)],
    ['a false schema', nested(false)],
    ['an array without items', nested({ type: 'array' })],
    ['a tuple', nested({ type: 'array', prefixItems: [{ type: 'string' }] })],
    ['an allOf of two schemas', nested({ allOf: [{ type: 'string' }, { minLength: 1 }] })],
    ['if/then/else', { type: 'object', properties: {}, if: {}, then: {} }],
    ['dependentSchemas', { type: 'object', properties: {}, dependentSchemas: { a: {} } }],
    ['a remote $ref', nested({ $ref: 'https://example.com/schema.json' })],
    ['a deep $ref', nested({ $ref: '#/properties/y' })],
    ['a dangling $ref', nested({ $ref: '#/$defs/missing' })],
    ['a $ref with validation next to it', nested({ $ref: '#', type: 'object' })],
    ['$defs below the root', nested({ type: 'string', $defs: {} })],
    ['a union next to other keywords', nested({ type: 'string', anyOf: [{ type: 'string' }] })],
    ['an enum of objects', nested({ enum: [{ a: 1 }] })],
    ['an unknown type', nested({ type: 'date' })],
  ])('returns null for %s', (_what, schema) => {
    expect(strictSchema(schema)).toBeNull();
  });

  it("returns null beyond OpenAI's limits: nesting depth and enum values", () => {
    let deep: JsonSchema = { type: 'string' };
    for (let i = 0; i < 9; i++) deep = nested(deep);
    expect(strictSchema(deep)).not.toBeNull(); // 10 levels
    expect(strictSchema(nested(deep))).toBeNull(); // 11
    const many = Array.from({ length: 1001 }, (_, i) => `v${i}`);
    expect(strictSchema(nested({ type: 'string', enum: many }))).toBeNull();
    expect(strictSchema(nested({ type: 'string', enum: many.slice(1) }))).not.toBeNull();
  });

  it('leaves the original schema unchanged', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'object', properties: { c: { type: 'number' } } } },
    };
    const copy = structuredClone(schema);
    strictSchema(schema);
    expect(schema).toEqual(copy);
  });
});

describe('fromStrictArguments', () => {
  const original: JsonSchema = {
    type: 'object',
    properties: {
      city: { type: 'string' },
      units: { type: 'string', enum: ['c', 'f'] },
      note: { type: ['string', 'null'] },
      filter: {
        type: 'object',
        properties: { tag: { type: 'string' }, min: { type: 'number' } },
        required: ['tag'],
        additionalProperties: false,
      },
      items: {
        type: 'array',
        items: { $ref: '#/$defs/item' },
      },
      shape: {
        anyOf: [
          {
            type: 'object',
            properties: { kind: { const: 'circle' }, r: { type: 'number' }, label: { type: 'string' } },
            required: ['kind', 'r'],
            additionalProperties: false,
          },
          {
            type: 'object',
            properties: { kind: { const: 'rect' }, w: { type: 'number' }, h: { type: 'number' } },
            required: ['kind'],
            additionalProperties: false,
          },
        ],
      },
    },
    required: ['city', 'note'],
    additionalProperties: false,
    $defs: {
      item: {
        type: 'object',
        properties: { id: { type: 'string' }, qty: { type: 'integer' } },
        required: ['id'],
        additionalProperties: false,
      },
    },
  };
  const strictVariant = strictSchema(original) as JsonSchema;

  it('removes the nulls standing in for omitted optional properties, at every level', () => {
    const sent = {
      city: 'Paris',
      units: null,
      note: null,
      filter: { tag: 'x', min: null },
      items: [
        { id: 'a', qty: null },
        { id: 'b', qty: 2 },
      ],
      shape: { kind: 'rect', w: 2, h: null },
    };
    expect(violation(strictVariant, sent)).toBeNull();
    const got = fromStrictArguments(original, deepFreeze(sent));
    expect(got).toEqual({
      city: 'Paris',
      note: null, // required, so its null is the model's value
      filter: { tag: 'x' },
      items: [{ id: 'a' }, { id: 'b', qty: 2 }],
      shape: { kind: 'rect', w: 2 },
    });
    expect(violation(original, got)).toBeNull();
    expect(violation(original, sent)).not.toBeNull();
  });

  it('picks the union branch by its keys and const values', () => {
    const sent = {
      city: 'x',
      note: 'n',
      units: 'c',
      filter: null,
      items: null,
      shape: { kind: 'circle', r: 1, label: null },
    };
    const got = fromStrictArguments(original, sent);
    expect(got).toEqual({ city: 'x', note: 'n', units: 'c', shape: { kind: 'circle', r: 1 } });
    expect(violation(original, got)).toBeNull();
  });

  it('keeps what the schema does not describe', () => {
    expect(fromStrictArguments(original, { city: 'x', extra: null, items: 'no' })).toEqual({
      city: 'x',
      extra: null,
      items: 'no',
    });
    expect(fromStrictArguments({ type: 'object' }, { a: null })).toEqual({ a: null });
  });

  it('keeps a __proto__ key an own property', () => {
    const schema: JsonSchema = { type: 'object', properties: { a: { type: 'string' } } };
    const args = JSON.parse('{"__proto__": {"x": 1}, "a": null}') as Record<string, unknown>;
    const got = fromStrictArguments(schema, args);
    expect(Object.keys(got)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
  });

  it('round trip: any arguments valid for the strict variant become valid for the original', () => {
    const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(arb, { nil: null });
    const num = fc.double({ noNaN: true, noDefaultInfinity: true });
    const item = fc.record({ id: fc.string(), qty: maybe(fc.integer()) });
    const shape = fc.oneof(
      fc.record({ kind: fc.constant('circle'), r: num, label: maybe(fc.string()) }),
      fc.record({ kind: fc.constant('rect'), w: maybe(num), h: maybe(num) }),
    );
    const sent = fc.record({
      city: fc.string(),
      units: maybe(fc.constantFrom('c', 'f')),
      note: maybe(fc.string()),
      filter: maybe(fc.record({ tag: fc.string(), min: maybe(num) })),
      items: maybe(fc.array(item, { maxLength: 4 })),
      shape: maybe(shape),
    });
    fc.assert(
      fc.property(sent, (args) => {
        expect(violation(strictVariant, args)).toBeNull();
        const got = fromStrictArguments(original, args);
        expect(violation(original, got)).toBeNull();
        expect(got).toEqual(withoutOptionalNulls(args));
      }),
    );
  });
});

/** The expected result for the round-trip schema: every null dropped except the required `note`. */
function withoutOptionalNulls(value: unknown, top = true): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutOptionalNulls(v, false));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null && !(top && k === 'note')) continue;
    out[k] = withoutOptionalNulls(v, false);
  }
  return out;
}
