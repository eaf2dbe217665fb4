import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z as zodMini } from 'zod/mini';
import { defineTool, isBrandedTool, TOOL_BRAND } from './define-tool.ts';
import { loadToolsModule } from './load-tools-module.ts';

// The tools modules live in a temp dir with no codecall in any node_modules above it: their
// `require('codecall')` resolves to this codecall's built entry (dist/), another copy than src/. (An ES
// module's import is resolved by vitest's own runner here: test/cli-package.test.ts runs that case.)
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'codecall-tools-module-'));
});

async function file(name: string, text: string, sub = ''): Promise<string> {
  const path = join(dir, sub, name);
  await writeFile(path, text);
  return path;
}

async function callAdd(path: string): Promise<unknown> {
  const tools = await loadToolsModule(path);
  expect(tools.map((t) => t.name)).toEqual(['add']);
  expect(isBrandedTool(tools[0])).toBe(true);
  return tools[0]?.execute({ a: 2, b: 3 }, {} as never);
}

describe('defineTool brand', () => {
  it('is a registry-wide symbol, not enumerable, so copies and equality ignore it', () => {
    const tool = defineTool({ name: 'x', description: 'x', execute: () => 1 });
    expect(TOOL_BRAND).toBe(Symbol.for('codecall.tool'));
    expect(isBrandedTool(tool)).toBe(true);
    expect(Object.getOwnPropertySymbols({ ...tool })).toEqual([]);
    expect(isBrandedTool({ ...tool })).toBe(false);
    expect(isBrandedTool(null)).toBe(false);
  });
});

describe('defineTool with a zod schema of other classes', () => {
  it("converts a zod/mini schema (not an instance of this zod's ZodType, as another copy of zod is not)", () => {
    const tool = defineTool({
      name: 'mini',
      description: 'x',
      input: zodMini.object({ q: zodMini.string() }) as never,
      execute: () => 1,
    });
    expect(tool.inputSchema).toMatchObject({
      type: 'object',
      properties: { q: { type: 'string' } },
      required: ['q'],
    });
  });
});

describe('loadToolsModule outside this project', () => {
  it('a CommonJS module requiring codecall', async () => {
    const path = await file(
      'tools.cjs',
      `const { defineTool } = require('codecall');
module.exports = [defineTool({ name: 'add', description: 'adds', execute: ({ a, b }) => a + b })];\n`,
    );
    await expect(callAdd(path)).resolves.toBe(5);
  });

  it('a .ts file with `export default` in a CommonJS project (compiled to exports.default)', async () => {
    const path = await file(
      'tools.ts',
      `import { defineTool } from 'codecall';
export default [defineTool({ name: 'add', description: 'adds', execute: (a: Record<string, number>) => (a.a ?? 0) + (a.b ?? 0) })];\n`,
    );
    await writeFile(join(dir, 'package.json'), '{"type":"commonjs"}\n');
    await expect(callAdd(path)).resolves.toBe(5);
  });

  it('still rejects what is not a defineTool result, saying so', async () => {
    const path = await file('bad.mjs', `export default [{ name: 'add' }];\n`);
    await expect(loadToolsModule(path)).rejects.toThrow(/export #0 is not a defineTool\(\.\.\.\) result/);
    const none = await file('none.cjs', `module.exports = 42;\n`);
    await expect(loadToolsModule(none)).rejects.toThrow(/must export by default an array or a record/);
  });
});
