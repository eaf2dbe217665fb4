import { expect } from 'vitest';
import { isErrorCode } from '../../src/errors/index.ts';
import type { ExecutionResult, SandboxDriver } from '../../src/spec/index.ts';
import { SANDBOX_DRIVER_API_VERSION } from '../../src/spec/index.ts';
import { runProgram } from '../../src/tools/index.ts';
import { echoTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectFailed, expectSucceeded, timed } from './harness.ts';

export function registerPoolCases(options: SuiteOptions): void {
  defineGroup(options, 'pool health', (g) => {
    g.test('describes itself: name, apiVersion and languages', async () => {
      const driver = g.driver();
      expect(typeof driver.name).toBe('string');
      expect(driver.name.length).toBeGreaterThan(0);
      expect(driver.apiVersion).toBe(SANDBOX_DRIVER_API_VERSION);
      expect(driver.languages).toContain(g.language);
      if (g.language === 'javascript') expect(driver.languages).toContain('typescript');
      await Promise.resolve();
    });

    g.program(
      'resources: toolCalls counts calls, wallMs and memoryBytes are positive',
      {
        javascript:
          "await tools.echo({ i: 1 });\nawait tools.echo({ i: 2 });\nawait tools.echo({ i: 3 });\nreturn new Array(1000).fill('x').join('').length;",
        python: "tools.echo(i=1)\ntools.echo(i=2)\ntools.echo(i=3)\nlen(''.join(['x'] * 1000))",
      },
      async (src) => {
        const result = await g.run(src, { tools: [echoTool()] });
        expect(expectSucceeded(result)).toBe(1000);
        expect(result.resources.toolCalls).toBe(3);
        expect(result.resources.wallMs).toBeGreaterThan(0);
        expect(result.resources.memoryBytes).toBeGreaterThan(0);
      },
    );

    g.program(
      'resources are reported for a failed execution too',
      { javascript: "throw new Error('x');", python: "raise Exception('x')" },
      async (src) => {
        const result = await g.run(src);
        expectFailed(result, 'GUEST_ERROR');
        expect(result.resources.toolCalls).toBe(0);
        expect(result.resources.wallMs).toBeGreaterThan(0);
        expect(typeof result.resources.memoryBytes).toBe('number');
      },
    );

    g.program(
      'runs many executions in a row',
      { javascript: 'return [1, 2, 3].map((x) => x * 2);', python: '[x * 2 for x in [1, 2, 3]]' },
      async (src) => {
        for (let i = 0; i < 40; i++) expect(expectSucceeded(await g.run(src))).toEqual([2, 4, 6]);
      },
    );

    g.programs(
      'failures of every kind in a row leave the pool healthy',
      {
        javascript: {
          guest: "throw new TypeError('t');",
          syntax: 'return (;',
          stack: 'const f = () => f();\nf();',
          memory: "let s = 'x';\nwhile (true) { s += s; s.charCodeAt(s.length - 1); }",
          timeout: 'while (true) {}',
          health: 'return 1 + 1',
        },
        python: {
          guest: "raise TypeError('t')",
          syntax: '(',
          stack: 'def f():\n    return f()\n\nf()',
          memory: "s = 'x'\nwhile True:\n    s += s",
          timeout: 'while True:\n    pass',
          health: '1 + 1',
        },
      },
      async (src) => {
        const limits = { timeoutMs: 300, memoryBytes: 16 * 1024 * 1024 };
        for (let round = 0; round < 3; round++) {
          expectFailed(await g.run(src.guest), 'GUEST_ERROR');
          expectFailed(await g.run(src.syntax), 'SYNTAX_ERROR');
          expectFailed(await g.run(src.stack), 'STACK_OVERFLOW');
          expectFailed(
            await g.run(src.memory, { limits: { memoryBytes: limits.memoryBytes } }),
            'MEMORY_LIMIT',
          );
          expectFailed(await g.run(src.timeout, { limits: { timeoutMs: limits.timeoutMs } }), 'TIMEOUT');
          expect(expectSucceeded(await g.run(src.health))).toBe(2);
        }
      },
      60_000,
    );

    g.programs(
      'close() settles running executions, then execute rejects',
      {
        javascript: { health: 'return 1 + 1', loop: 'while (true) {}' },
        python: { health: '1 + 1', loop: 'while True:\n    pass' },
      },
      async (src) => {
        const driver: SandboxDriver = await options.createDriver();
        const run = (code: string): Promise<ExecutionResult> =>
          runProgram({ driver, code, language: src.health.language, limits: { timeoutMs: 20_000 } });
        expect(expectSucceeded(await run(src.health.code))).toBe(2);
        const running = run(src.loop.code).then(
          (r) => ({ settled: 'resolved' as const, r }),
          (e: unknown) => ({ settled: 'rejected' as const, e }),
        );
        await new Promise((r) => setTimeout(r, 100));
        const { ms } = await timed(() => driver.close());
        expect(ms).toBeLessThan(5_000);
        const outcome = await running;
        if (outcome.settled === 'resolved') expect(outcome.r.status).toBe('failed');
        let rejection: unknown;
        await run(src.health.code).then(
          () => undefined,
          (e: unknown) => (rejection = e),
        );
        expect(rejection).toBeInstanceOf(Error);
        expect(isErrorCode((rejection as { code?: unknown }).code)).toBe(true);
        await driver.close();
      },
    );
  });
}
