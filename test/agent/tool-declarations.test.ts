import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { pythonStubs } from '../../src/agent/python-stubs.ts';
import { schemaToType, toolDeclarations } from '../../src/agent/tool-declarations.ts';
import { functionTools } from '../../src/agent/tool-specs.ts';
import type { JsonSchema, ToolDefinition } from '../../src/spec/index.ts';
import { defineTool } from '../../src/tools/define-tool.ts';
import { loadToolsModule } from '../../src/tools/load-tools-module.ts';

const tool = (options: Partial<Parameters<typeof defineTool>[0]> & { name: string }): ToolDefinition =>
  defineTool({ description: '', effect: 'read', execute: () => null, ...options });

describe('schemaToType', () => {
  it.each<[JsonSchema, string]>([
    [{ type: 'string' }, 'string'],
    [{ type: 'number' }, 'number'],
    [{ type: 'integer' }, 'number'],
    [{ type: 'boolean' }, 'boolean'],
    [{ type: 'null' }, 'null'],
    [{}, 'unknown'],
    [{ description: 'anything' }, 'unknown'],
    [{ type: 'no-such-type' }, 'unknown'],
    [{ type: ['string', 'null'] }, 'string | null'],
    [{ type: 'string', nullable: true }, 'string | null'],
    [{ enum: ['celsius', 'fahrenheit'] }, '"celsius" | "fahrenheit"'],
    [{ type: 'string', enum: ['a"b', 'c'] }, '"a\\"b" | "c"'],
    [{ enum: [1, true, null] }, '1 | true | null'],
    [{ const: 'fixed' }, '"fixed"'],
    [{ const: 3 }, '3'],
    [{ type: 'array', items: { type: 'string' } }, 'string[]'],
    [{ type: 'array' }, 'unknown[]'],
    [{ type: 'array', items: { type: ['string', 'number'] } }, '(string | number)[]'],
    [{ type: 'array', items: { type: 'array', items: { type: 'integer' } } }, 'number[][]'],
    [{ type: 'array', prefixItems: [{ type: 'number' }, { type: 'string' }] }, '[number, string]'],
    [
      { type: 'array', prefixItems: [{ type: 'number' }], items: { type: 'boolean' } },
      '[number, ...boolean[]]',
    ],
    [
      { type: 'array', items: [{ type: 'number' }, { type: 'number' }], additionalItems: false },
      '[number, number]',
    ],
    [{ anyOf: [{ type: 'string' }, { type: 'number' }] }, 'string | number'],
    [{ oneOf: [{ const: 'a' }, { const: 'b' }, { const: 'a' }] }, '"a" | "b"'],
    [{ anyOf: [{ type: 'string' }, {}] }, 'unknown'],
    [
      {
        allOf: [
          { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
          { type: 'object', properties: { b: { type: 'number' } } },
        ],
      },
      '{ a: string } & { b?: number }',
    ],
    [
      {
        allOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { anyOf: [{ type: 'null' }, {}] }],
      },
      '{ a?: string }',
    ],
    [
      {
        type: 'object',
        properties: { kind: { type: 'string' } },
        anyOf: [{ required: ['kind'] }, { required: ['id'] }],
      },
      '{ kind?: string }',
    ],
  ])('%j is %s', (schema, expected) => {
    expect(schemaToType(schema)).toBe(expected);
  });

  it('renders objects: required and optional properties, index signatures, empty objects', () => {
    expect(schemaToType({ type: 'object' })).toBe('{ [key: string]: unknown }');
    expect(schemaToType({ type: 'object', additionalProperties: false })).toBe('{}');
    expect(schemaToType({ type: 'object', additionalProperties: { type: 'number' } })).toBe(
      '{ [key: string]: number }',
    );
    expect(
      schemaToType({
        type: 'object',
        properties: { id: { type: 'string' }, note: { type: 'string' } },
        required: ['id'],
      }),
    ).toBe('{ id: string; note?: string }');
    expect(
      schemaToType({ type: 'object', properties: { id: { type: 'string' } }, additionalProperties: true }),
    ).toBe('{ id?: string; [key: string]: unknown }');
    // A precise index signature cannot hold properties of other types: it goes in its own object type.
    expect(
      schemaToType({
        type: 'object',
        properties: { id: { type: 'string' } },
        additionalProperties: { type: 'number' },
      }),
    ).toBe('{ id?: string } & { [key: string]: number }');
    expect(
      schemaToType({
        type: 'object',
        patternProperties: { '^x-': { type: 'string' } },
        additionalProperties: false,
      }),
    ).toBe('{ [key: string]: string }');
    // Properties without `type: object` still make an object.
    expect(schemaToType({ properties: { a: { type: 'boolean' } }, required: ['a'] })).toBe('{ a: boolean }');
  });

  it('quotes property names that are not identifiers', () => {
    expect(
      schemaToType({
        type: 'object',
        properties: {
          'content-type': { type: 'string' },
          '2fa': { type: 'boolean' },
          'with space': { type: 'null' },
          $ok_1: { type: 'number' },
          '': { type: 'string' },
        },
        required: ['content-type'],
      }),
    ).toBe(`{
  "content-type": string;
  "2fa"?: boolean;
  "with space"?: null;
  $ok_1?: number;
  ""?: string;
}`);
  });

  it('documents nested properties with JSDoc, one line per property', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        when: { type: 'string', format: 'date-time', description: 'Start of the event.' },
        repeat: { type: 'integer', default: 1, description: 'How many times; ends */ here.' },
        attendees: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              email: { type: 'string', format: 'email' },
              role: { enum: ['host', 'guest'], description: 'Role\nof the attendee.' },
              name: { type: 'string' },
            },
            required: ['email'],
          },
        },
      },
      required: ['when', 'attendees'],
    };
    expect(schemaToType(schema)).toBe(`{
  /** Start of the event. (format: date-time) */
  when: string;
  /** How many times; ends *\\/ here. (default: 1) */
  repeat?: number;
  attendees: {
    /** (format: email) */
    email: string;
    /**
     * Role
     * of the attendee.
     */
    role?: "host" | "guest";
    name?: string;
  }[];
}`);
    // The indent is that of the line the type starts on.
    expect(schemaToType({ type: 'object', properties: { a: { description: 'A.' } } }, '    ')).toBe(
      '{\n      /** A. */\n      a?: unknown;\n    }',
    );
  });

  it('breaks long object types over several lines', () => {
    const properties = Object.fromEntries(
      ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf'].map((k) => [k, { type: 'string' }]),
    );
    expect(schemaToType({ type: 'object', properties })).toBe(
      '{\n  alpha?: string;\n  bravo?: string;\n  charlie?: string;\n  delta?: string;\n' +
        '  echo?: string;\n  foxtrot?: string;\n  golf?: string;\n}',
    );
  });

  it('inlines local $refs ($defs, definitions, JSON pointers) and cuts cycles with unknown', () => {
    const defs = { $defs: { city: { type: 'string', description: 'A city.' } } };
    expect(schemaToType({ ...defs, type: 'array', items: { $ref: '#/$defs/city' } })).toBe('string[]');
    expect(
      schemaToType({
        definitions: { 'a/b~c': { enum: ['x'] } },
        type: 'object',
        properties: { v: { $ref: '#/definitions/a~1b~0c' } },
      }),
    ).toBe('{ v?: "x" }');
    expect(
      schemaToType({
        type: 'object',
        properties: { v: { $ref: '#/$defs/missing' }, w: { $ref: 'https://example.com/s.json' } },
      }),
    ).toBe('{ v?: unknown; w?: unknown }');
    // Only own names resolve: not the prototype, not a name a $defs object inherits.
    const inherited = { $defs: Object.create({ city: { type: 'string' } }) as JsonSchema };
    expect(
      schemaToType({
        ...inherited,
        type: 'object',
        properties: {
          v: { $ref: '#/$defs/city' },
          w: { $ref: '#/__proto__' },
          x: { $ref: '#/$defs/constructor' },
        },
      }),
    ).toBe('{ v?: unknown; w?: unknown; x?: unknown }');
    // A tree: the recursion stops at the second visit of the node.
    const tree: JsonSchema = {
      $ref: '#/$defs/node',
      $defs: {
        node: {
          type: 'object',
          properties: {
            value: { type: 'number' },
            children: { type: 'array', items: { $ref: '#/$defs/node' } },
          },
          required: ['value'],
        },
      },
    };
    expect(schemaToType(tree)).toBe('{ value: number; children?: unknown[] }');
    // zod's recursive schemas refer to the root as `#`.
    const Node: z.ZodType = z.lazy(() => z.object({ value: z.number(), children: z.array(Node) }));
    expect(schemaToType(z.toJSONSchema(Node) as JsonSchema)).toBe('{ value: number; children: unknown[] }');
    // Mutual recursion.
    expect(
      schemaToType({
        $defs: {
          a: { type: 'object', properties: { b: { $ref: '#/$defs/b' } } },
          b: { type: 'object', properties: { a: { $ref: '#/$defs/a' } } },
        },
        $ref: '#/$defs/a',
      }),
    ).toBe('{ b?: { a?: unknown } }');
    // A property's documentation falls back to the referenced schema's.
    expect(schemaToType({ ...defs, type: 'object', properties: { at: { $ref: '#/$defs/city' } } })).toBe(
      '{\n  /** A city. */\n  at?: string;\n}',
    );
  });
});

const WEATHER = tool({
  name: 'get_weather',
  description: 'Current weather for a city.',
  input: {
    type: 'object',
    properties: {
      city: { type: 'string', description: 'City name, e.g. "Paris".' },
      unit: { enum: ['celsius', 'fahrenheit'], description: 'Temperature unit.', default: 'celsius' },
      days: { type: 'integer' },
    },
    required: ['city'],
  },
  output: {
    type: 'object',
    description: 'The current conditions.',
    properties: { temp: { type: 'number' }, conditions: { type: 'string' } },
    required: ['temp', 'conditions'],
  },
  requiresApproval: true,
});

describe('toolDeclarations', () => {
  it('declares the tools of examples/tools.ts', async () => {
    const examples = await loadToolsModule(
      fileURLToPath(new URL('../../examples/tools.ts', import.meta.url)),
    );
    expect(toolDeclarations(examples)).toBe(`declare const tools: {
  /**
   * Current weather for a city (takes about 200 ms).
   * @param args.city City name, e.g. "Paris"
   */
  get_weather(args: { city: string }): Promise<{ city: string; temperature_c: number; sky: string }>;

  /** Converts Celsius to Fahrenheit. */
  convert_temperature(args: { celsius: number }): Promise<unknown>;
};`);
  });

  it('documents parameters, result and approval; groups tools by namespace in order', () => {
    const declarations = toolDeclarations([
      WEATHER,
      tool({ name: 'ping', namespace: 'net' }),
      tool({
        name: 'send',
        description: 'Sends a message.\nEnds the comment? */ No.',
        input: {
          type: 'object',
          properties: {
            to: { type: 'array', items: { type: 'string', format: 'email' }, description: 'Recipients.' },
            'reply-to': { type: 'string', description: 'Where answers go.' },
            options: {
              type: 'object',
              properties: { urgent: { type: 'boolean', description: 'Flag it.' } },
            },
          },
          required: ['to'],
          additionalProperties: false,
        },
        requiresApproval: (args) => (args as { to: string[] }).to.length > 1,
      }),
    ]);
    expect(declarations).toBe(`declare const tools: {
  /**
   * Current weather for a city.
   * @param args.city City name, e.g. "Paris".
   * @param args.unit Temperature unit. (default: "celsius")
   * @returns The current conditions.
   * Requires human approval.
   */
  get_weather(args: { city: string; unit?: "celsius" | "fahrenheit"; days?: number }): Promise<{ temp: number; conditions: string }>;

  /**
   * Sends a message.
   * Ends the comment? *\\/ No.
   * @param args.to Recipients.
   * @param args["reply-to"] Where answers go.
   * Requires human approval.
   */
  send(args: {
    to: string[];
    "reply-to"?: string;
    options?: {
      /** Flag it. */
      urgent?: boolean;
    };
  }): Promise<unknown>;
};

declare const net: {
  ping(args?: { [key: string]: unknown }): Promise<unknown>;
};`);
    expect(toolDeclarations([WEATHER, tool({ name: 'ping', namespace: 'net' })])).toBe(
      toolDeclarations([WEATHER, tool({ name: 'ping', namespace: 'net' })]),
    );
  });

  it("says a tool's budget in the task (ADR 0044), in the declarations, the Python stubs and function specs", () => {
    const search = tool({
      name: 'search',
      description: 'Searches.',
      budget: { maxCalls: 5, maxWallSeconds: 30 },
    });
    const once = tool({ name: 'once', budget: { maxCalls: 1 } });
    const line =
      'At most 5 calls and 30 s of calls in this task; past that a call fails with code TOOL_BUDGET_EXCEEDED.';
    expect(toolDeclarations([search])).toContain(`   * ${line}\n`);
    expect(toolDeclarations([once])).toContain('/** At most 1 call in this task;');
    expect(pythonStubs([search])).toContain(`        ${line}\n`);
    expect(functionTools([search])[0]?.spec.description).toBe(`Searches. ${line}`);
    expect(toolDeclarations([tool({ name: 'free' })])).not.toContain('At most');
  });

  it('takes the arguments of zod schemas and a top-level $ref', () => {
    const declarations = toolDeclarations([
      tool({
        name: 'search',
        input: z.object({
          query: z.string().describe('What to look for'),
          limit: z.number().int().optional(),
          since: z.iso.datetime().nullable().optional(),
        }),
        output: z.array(z.object({ title: z.string(), score: z.number() })),
      }),
      tool({
        name: 'lookup',
        input: {
          $ref: '#/$defs/query',
          $defs: {
            query: { type: 'object', properties: { id: { type: 'string', description: 'The id.' } } },
          },
        },
      }),
    ]);
    expect(declarations).toBe(`declare const tools: {
  /** @param args.query What to look for */
  search(args: { query: string; limit?: number; since?: string | null }): Promise<{ title: string; score: number }[]>;

  /** @param args.id The id. */
  lookup(args?: { id?: string }): Promise<unknown>;
};`);
  });

  it('is valid TypeScript that checks a program calling the tools', async () => {
    const examples = await loadToolsModule(
      fileURLToPath(new URL('../../examples/tools.ts', import.meta.url)),
    );
    const odd = tool({
      name: 'odd',
      description: 'Every shape at once. */ /* still a comment',
      input: {
        $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } },
        type: 'object',
        properties: {
          'odd-name': { type: 'string', description: 'Quoted. */' },
          list: { $ref: '#/$defs/node' },
          pair: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'string' }] },
          mode: { enum: ['a', 'b'] },
          extra: {
            type: 'object',
            properties: { n: { type: 'number' } },
            additionalProperties: { type: 'number' },
          },
          both: {
            allOf: [{ properties: { a: { type: 'string' } } }, { properties: { b: { type: 'number' } } }],
          },
          either: {
            oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
            nullable: true,
          },
          nested: {
            type: 'object',
            properties: {
              deep: { type: 'object', properties: { x: { type: 'integer', description: 'X.' } } },
            },
          },
        },
        required: ['odd-name', 'pair'],
      },
      output: { type: 'object', additionalProperties: { type: 'array', items: { type: 'boolean' } } },
    });
    const program = `${toolDeclarations([...examples, WEATHER, odd, tool({ name: 'ping', namespace: 'net' })])}

async function main(): Promise<string> {
  const w = await tools.get_weather({ city: 'Paris' });
  const f: unknown = await tools.convert_temperature({ celsius: w.temperature_c });
  const o = await tools.odd({ 'odd-name': 'x', pair: [1, 'a'], mode: 'b', either: null, nested: { deep: { x: 1 } } });
  const flags: boolean[] | undefined = o['any'];
  await net.ping();
  return w.sky + String(f) + String(flags);
}
void main;
`;
    expect(await typeErrors(program)).toEqual([]);
    // The check is not vacuous: a wrong argument is an error.
    const wrong = program.replace("get_weather({ city: 'Paris' })", "get_weather({ town: 'Paris' })");
    expect(await typeErrors(wrong)).toEqual([expect.stringContaining("'town' does not exist")]);
  });
});

/** The diagnostics of compiling this script with strict TypeScript. */
async function typeErrors(source: string): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'codecall-decls-'));
  try {
    const file = join(dir, 'prompt.ts');
    await writeFile(file, source);
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts'],
      types: [],
    });
    return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
