// Tools named as other systems name them ('lookup-user', vercel/ai code-mode's run-compatibility test): reachable as
// tools['lookup-user'] in JavaScript, tools.lookup_user and getattr(tools, 'lookup-user') in Python, and typed in
// both prompts and in function calling.
import { afterAll, describe, expect, it } from 'vitest';
import { functionTools, pythonStubs, toolDeclarations } from '../../src/agent/index.ts';
import { createPythonDriver, createQuickJsDriver, probePython } from '../../src/sandbox/index.ts';
import { defineTool, runProgram } from '../../src/tools/index.ts';
import type { ToolDefinition } from '../../src/internal.ts';

const probe = await probePython();

const echo = (name: string, tag: string): ToolDefinition =>
  defineTool({
    name,
    description: `${name} tool`,
    input: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    effect: 'read',
    execute: ({ id }) => `${tag}:${String(id)}`,
  });

const tools = [echo('lookup-user', 'hyphen'), echo('get-$x', 'dollar')];
const quickjs = createQuickJsDriver();
afterAll(() => quickjs.close());

async function value(language: 'javascript' | 'python', code: string, given = tools): Promise<unknown> {
  const driver = language === 'python' ? createPythonDriver({ warm: 0 }) : quickjs;
  try {
    const r = await runProgram({ driver, language, code, tools: given, limits: { timeoutMs: 30_000 } });
    if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
    return r.value;
  } finally {
    if (driver !== quickjs) await driver.close();
  }
}

describe("a tool whose name has '-'", () => {
  it("JavaScript calls it as tools['lookup-user']", async () => {
    expect(
      await value(
        'javascript',
        "return [await tools['lookup-user']({ id: 'u1' }), await tools['get-$x']({ id: 'u2' }), await tools.lookup_user({ id: 'u3' }).catch((e) => e.code)];",
      ),
    ).toEqual(['hyphen:u1', 'dollar:u2', 'NO_SUCH_TOOL']);
  });

  it.skipIf(!probe.ok)(
    'Python calls it as tools.lookup_user, its _async twin, and by its name through getattr',
    async () => {
      expect(
        await value(
          'python',
          [
            'import asyncio',
            "a = tools.lookup_user(id='u1')",
            "b = asyncio.run(tools.lookup_user_async(id='u2'))",
            "c = getattr(tools, 'lookup-user')(id='u3')",
            "d = tools.get__x(id='u4')",
            'final_answer([a, b, c, d])',
          ].join('\n'),
        ),
      ).toEqual(['hyphen:u1', 'hyphen:u2', 'hyphen:u3', 'dollar:u4']);
    },
  );

  it.skipIf(!probe.ok)('in Python a tool really named lookup_user keeps its name', async () => {
    const both = [echo('lookup-user', 'hyphen'), echo('lookup_user', 'underscore')];
    expect(
      await value(
        'python',
        "final_answer([tools.lookup_user(id='a'), getattr(tools, 'lookup-user')(id='b')])",
        both,
      ),
    ).toEqual(['underscore:a', 'hyphen:b']);
  });

  it('the prompts type it under a name each language can write', () => {
    const ts = toolDeclarations(tools);
    expect(ts).toContain('"lookup-user"(args: {');
    expect(ts).toContain('"get-$x"(args: {');
    const py = pythonStubs(tools);
    expect(py).toContain('def lookup_user(*, id: str) -> Any:');
    expect(py).toContain('def get__x(*, id: str) -> Any:');
    expect(py).toContain(`The tool's name is "lookup-user".`);
  });

  it('function calling names it within the providers’ characters', () => {
    expect(functionTools(tools).map((t) => t.spec.name)).toEqual(['lookup-user', 'get-_x']);
  });
});
