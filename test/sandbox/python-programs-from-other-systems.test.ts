// Issue 19, Python: a program that is one ```python block, and Code Mode's codemode.x() as tools.x().
// For real in bubblewrap, through runProgram (the tools run on the host).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPythonDriver, defineTool, probePython, runProgram } from '../../src/internal.ts';
import type { ExecutionResult, PythonDriver, ToolDefinition } from '../../src/internal.ts';
import { echoTool } from '../conformance/fixtures.ts';

const probe = await probePython();

describe.skipIf(!probe.ok)(
  `python programs from other systems${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    let driver: PythonDriver;
    beforeAll(async () => {
      driver = createPythonDriver({ warm: 1 });
      await driver.ready();
    });
    afterAll(() => driver.close());
    const run = (code: string, tools: ToolDefinition[] = [echoTool()]): Promise<ExecutionResult> =>
      runProgram({ driver, code, language: 'python', tools });
    const value = async (code: string): Promise<unknown> => {
      const r = await run(code);
      if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
      return r.value;
    };

    it('runs a program that is one fenced python block without its fences, keeping its lines', async () => {
      expect(await value('```python\nr = tools.echo(city="Oslo")\nr["city"]\n```')).toBe('Oslo');
      expect(await value('\n```py\n1 + 1\n```\n')).toBe(2);
      expect(await value('~~~\n3\n~~~')).toBe(3);
      const error = await run('```python\na = 1\nraise ValueError("third line")\n```');
      expect(error.status === 'failed' && error.error).toMatchObject({ name: 'ValueError', line: 3 });
      // A block fenced as another language, or text around the block, is taken as written (and fails).
      expect((await run('```js\n1\n```')).status).toBe('failed');
      expect((await run('Here is the code:\n```python\n1\n```')).status).toBe('failed');
    });

    it("gives Code Mode's codemode the program's tools, unless a namespace takes the name", async () => {
      expect(await value('codemode.echo(city="Lima")["city"]')).toBe('Lima');
      expect(await value('import asyncio\n(await codemode.echo_async(n=2))["n"]')).toBe(2);
      expect(await value('codemode is tools')).toBe(true);
      const own = defineTool({ name: 'ping', namespace: 'codemode', description: '', execute: () => 'own' });
      expect(await run('codemode.ping()', [echoTool(), own])).toMatchObject({
        status: 'succeeded',
        value: 'own',
      });
    });
  },
);
