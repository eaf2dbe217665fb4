import { expect } from 'vitest';
import type { JsonSchema } from '../../src/spec/index.ts';
import { defineTool } from '../../src/tools/index.ts';
import { sleepTool } from './fixtures.ts';
import type { Group, SuiteOptions } from './harness.ts';
import { defineGroup, expectSucceeded, NEIGHBOUR } from './harness.ts';

/**
 * Schemas whose patterns backtrack exponentially in a backtracking engine, each with an argument (as JSON, the
 * same in both languages) that would keep it busy for longer than anyone waits: 2^40 and more steps.
 */
const CATASTROPHIC: readonly { name: string; schema: JsonSchema; args: string }[] = [
  {
    name: 'pattern ^(a+)+$',
    schema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } },
    args: JSON.stringify({ s: `${'a'.repeat(48)}!` }),
  },
  {
    name: 'pattern ^(a|aa)+$',
    schema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a|aa)+$' } } },
    args: JSON.stringify({ s: `${'a'.repeat(90)}!` }),
  },
  {
    name: 'pattern ^(\\w+\\s?)*$ in array items',
    schema: {
      type: 'object',
      properties: { list: { type: 'array', items: { type: 'string', pattern: '^(\\w+\\s?)*$' } } },
    },
    args: JSON.stringify({ list: ['ok', `${'word'.repeat(16)}#`] }),
  },
  {
    name: 'patternProperties ^(x+x+)+y$',
    schema: {
      type: 'object',
      patternProperties: { '^(x+x+)+y$': { type: 'number' } },
      additionalProperties: false,
    },
    args: JSON.stringify({ [`${'x'.repeat(40)}`]: 1 }),
  },
];

/** A guest argument that would backtrack for minutes is judged at once; a neighbour's tool calls go on. */
function patternCases(g: Group): void {
  for (const c of CATASTROPHIC) {
    const tool = () =>
      defineTool({ name: 'check', description: 'checks', input: c.schema, execute: () => 'ran' });
    g.program(
      `a tool schema's ${c.name} against a crafted guest string answers at once; neighbours go on`,
      {
        javascript: `try { await tools.check(${c.args}); return 'accepted'; } catch (e) { return e.code; }`,
        python: `import json\ntry:\n    tools.check(**json.loads(${JSON.stringify(c.args)}))\n    r = 'accepted'\nexcept ToolError as e:\n    r = e.code\nr`,
      },
      async (src) => {
        const neighbour = NEIGHBOUR[g.language];
        const [crafted, other] = await Promise.all([
          g.run(src, { tools: [tool()] }),
          neighbour === undefined
            ? Promise.resolve(null)
            : g.run({ code: neighbour, language: g.language }, { tools: [sleepTool()] }),
        ]);
        expect(expectSucceeded(crafted)).toBe('TOOL_VALIDATION');
        if (other) expect(expectSucceeded(other)).toBe('ok');
      },
      30_000,
    );
  }
}

/** Issue 15 class 9: guest data never drives host work that no guest limit stops. */
export function registerHostWorkCases(options: SuiteOptions): void {
  defineGroup(options, 'host work', (g) => {
    patternCases(g);
  });
}
