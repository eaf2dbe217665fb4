import { expect } from 'vitest';
import type { ExecutionLimits, ToolDefinition } from '../../src/spec/index.ts';
import { hangTool, newToolLog, sleepTool } from './fixtures.ts';
import type { Group, PerLanguage, SuiteOptions } from './harness.ts';
import {
  defineGroup,
  expectFailed,
  expectSucceeded,
  HEALTH,
  NEIGHBOUR,
  SUITE_LANGUAGES,
  timed,
  waitFor,
} from './harness.ts';

const MiB = 1024 * 1024;

interface Breach {
  limits: Partial<ExecutionLimits>;
  code: string;
  tools?: () => readonly ToolDefinition[];
  /** Upper bound on how long the breaching execution may take, in ms. */
  withinMs?: number;
}

/**
 * A limit breach: the breaching program fails with `code` while a neighbour running at the same time on the
 * same driver succeeds, and afterwards the driver still runs `return 1 + 1`.
 */
function breachCase(g: Group, name: string, programs: PerLanguage<string>, breach: Breach): void {
  const sets: PerLanguage<Record<'breach' | 'health' | 'neighbour', string>> = {};
  for (const language of SUITE_LANGUAGES) {
    const [breachCode, health, neighbour] = [programs[language], HEALTH[language], NEIGHBOUR[language]];
    if (breachCode !== undefined && health !== undefined && neighbour !== undefined) {
      sets[language] = { breach: breachCode, health, neighbour };
    }
  }
  g.programs(
    name,
    sets,
    async (src) => {
      const tools = [sleepTool(), ...(breach.tools?.() ?? [])];
      const [bad, neighbour] = await Promise.all([
        timed(() => g.run(src.breach, { tools, limits: breach.limits })),
        g.run(src.neighbour, { tools: [sleepTool()] }),
      ]);
      expectFailed(bad.value, breach.code);
      if (breach.withinMs !== undefined) expect(bad.ms).toBeLessThan(breach.withinMs);
      expect(expectSucceeded(neighbour)).toBe('ok');
      expect(expectSucceeded(await g.run(src.health))).toBe(2);
    },
    30_000,
  );
}

export function registerLimitCases(options: SuiteOptions): void {
  defineGroup(options, 'limits', (g) => {
    breachCase(
      g,
      'timeoutMs: a CPU loop is TIMEOUT',
      { javascript: 'while (true) {}', python: 'while True:\n    pass' },
      {
        limits: { timeoutMs: 300 },
        code: 'TIMEOUT',
        withinMs: 5_000,
      },
    );
    breachCase(
      g,
      'timeoutMs: a promise that never settles is TIMEOUT',
      {
        javascript: 'await new Promise(() => {});',
        python: 'import asyncio\n\nawait asyncio.get_running_loop().create_future()',
      },
      {
        limits: { timeoutMs: 300 },
        code: 'TIMEOUT',
        withinMs: 5_000,
      },
    );
    breachCase(
      g,
      'timeoutMs: a tool that never returns is TIMEOUT',
      { javascript: 'await tools.hang({});', python: 'tools.hang()' },
      {
        limits: { timeoutMs: 300 },
        code: 'TIMEOUT',
        tools: () => [hangTool()],
        withinMs: 5_000,
      },
    );

    breachCase(
      g,
      'timeoutMs: the guest cannot catch the deadline',
      {
        javascript:
          "for (;;) {\n  try { while (true) {} } catch (e) { console.log('caught', String(e)); }\n}",
        python:
          "while True:\n    try:\n        while True:\n            pass\n    except BaseException as e:\n        print('caught', e)",
      },
      { limits: { timeoutMs: 300 }, code: 'TIMEOUT', withinMs: 5_000 },
    );
    breachCase(
      g,
      'timeoutMs: a deadline hit while the result is serialized is TIMEOUT',
      {
        javascript:
          'const spin = () => { while (true) {} };\nreturn new Proxy({ a: 1 }, { get: spin, ownKeys: spin, getPrototypeOf: spin });',
        // Python: a dict whose iteration (which the encoder uses) never ends.
        python: [
          'class Spin(dict):',
          '    def __iter__(self):',
          '        while True:',
          '            pass',
          '    items = keys = __iter__',
          '',
          'Spin(a=1)',
        ].join('\n'),
      },
      { limits: { timeoutMs: 300 }, code: 'TIMEOUT', withinMs: 5_000 },
    );

    breachCase(
      g,
      'cpuMs: a CPU loop within the wall-clock budget is CPU_LIMIT',
      { javascript: 'while (true) {}', python: 'while True:\n    pass' },
      { limits: { timeoutMs: 20_000, cpuMs: 300 }, code: 'CPU_LIMIT', withinMs: 5_000 },
    );
    g.program(
      'cpuMs: waiting for tools is not CPU time',
      {
        javascript: 'for (let i = 0; i < 4; i++) await tools.sleep({ ms: 150 });\nreturn "waited";',
        python: "for i in range(4):\n    tools.sleep(ms=150)\n'waited'",
      },
      async (src) => {
        const result = await g.run(src, { tools: [sleepTool()], limits: { cpuMs: 200, timeoutMs: 10_000 } });
        expect(expectSucceeded(result)).toBe('waited');
        expect(result.resources.wallMs).toBeGreaterThan(550);
        expect(result.resources.cpuMs ?? 0).toBeLessThan(200);
      },
    );
    g.program(
      'cpuMs: a refused CPU budget names the limit',
      { javascript: 'return 1;', python: '1' },
      async (src) => {
        const result = await g.run(src, { limits: { cpuMs: -1 } });
        expect(expectFailed(result, 'INVALID_ARGUMENT').message).toMatch(/cpuMs/);
      },
    );

    g.program(
      'timeoutMs: the hanging tool is aborted when the execution times out',
      { javascript: 'await tools.hang({});', python: 'tools.hang()' },
      async (src) => {
        const log = newToolLog();
        expectFailed(await g.run(src, { tools: [hangTool(log)], limits: { timeoutMs: 300 } }), 'TIMEOUT');
        expect(log.signals).toHaveLength(1);
        await waitFor(() => log.signals[0]?.aborted === true, 2_000);
      },
    );

    const memory = { limits: { memoryBytes: 16 * MiB, timeoutMs: 20_000 }, code: 'MEMORY_LIMIT' };
    breachCase(
      g,
      'memoryBytes: new Uint8Array(1e9) is MEMORY_LIMIT',
      {
        javascript: 'const a = new Uint8Array(1e9);\nreturn a.length;',
        python: 'a = bytearray(10**9)\nlen(a)',
      },
      memory,
    );
    breachCase(
      g,
      "memoryBytes: 'x'.repeat(1e9) is MEMORY_LIMIT",
      { javascript: "const s = 'x'.repeat(1e9);\nreturn s.length;", python: "s = 'x' * 10**9\nlen(s)" },
      memory,
    );
    breachCase(
      g,
      'memoryBytes: an array push loop is MEMORY_LIMIT',
      {
        javascript: 'const a = [];\nwhile (true) a.push({ i: a.length, s: "abcdefgh" + a.length });',
        python: "a = []\nwhile True:\n    a.append({'i': len(a), 's': 'abcdefgh' + str(len(a))})",
      },
      memory,
    );
    breachCase(
      g,
      'memoryBytes: string doubling is MEMORY_LIMIT',
      {
        javascript: "let s = 'x';\nwhile (true) { s += s; s.charCodeAt(s.length - 1); }",
        python: "s = 'x'\nwhile True:\n    s += s",
      },
      memory,
    );

    breachCase(
      g,
      'deep recursion is STACK_OVERFLOW',
      { javascript: 'function f() { return f(); }\nf();', python: 'def f():\n    return f()\n\nf()' },
      {
        limits: {},
        code: 'STACK_OVERFLOW',
      },
    );
    breachCase(
      g,
      'deep recursion through arguments is STACK_OVERFLOW',
      {
        javascript: 'const f = (n) => 1 + f(n + 1);\nreturn f(0);',
        python: 'f = lambda n: 1 + f(n + 1)\nf(0)',
      },
      { limits: {}, code: 'STACK_OVERFLOW' },
    );

    g.program(
      'maxToolCalls: the call over the limit is TOOL_CALL_LIMIT and is not run',
      {
        javascript: 'for (let i = 0; i < 5; i++) await tools.sleep({ ms: 1 });\nreturn "finished";',
        python: "for i in range(5):\n    tools.sleep(ms=1)\n'finished'",
      },
      async (src) => {
        const log = newToolLog();
        expectFailed(
          await g.run(src, { tools: [sleepTool(log)], limits: { maxToolCalls: 3 } }),
          'TOOL_CALL_LIMIT',
        );
        expect(log.args).toHaveLength(3);
        await g.expectHealthy();
      },
    );
    breachCase(
      g,
      'maxToolCalls: breach leaves the pool healthy',
      {
        javascript: 'for (let i = 0; i < 5; i++) await tools.sleep({ ms: 1 });',
        python: 'for i in range(5):\n    tools.sleep(ms=1)',
      },
      {
        limits: { maxToolCalls: 3 },
        code: 'TOOL_CALL_LIMIT',
      },
    );

    breachCase(
      g,
      'sourceBytes: a program over it is SOURCE_TOO_LARGE',
      { javascript: `return 1; // ${'x'.repeat(500)}`, python: `1  # ${'x'.repeat(500)}` },
      {
        limits: { sourceBytes: 100 },
        code: 'SOURCE_TOO_LARGE',
      },
    );
    g.program(
      'sourceBytes: a program within it runs',
      { javascript: 'return 1;', python: '1' },
      async (src) => {
        expect(expectSucceeded(await g.run(src, { limits: { sourceBytes: 100 } }))).toBe(1);
      },
    );

    breachCase(
      g,
      'outputBytes: breach leaves the pool healthy',
      {
        javascript: "while (true) console.log('spam spam spam');",
        python: "while True:\n    print('spam spam spam')",
      },
      {
        limits: { outputBytes: 10_000 },
        code: 'OUTPUT_LIMIT',
      },
    );
    breachCase(
      g,
      'resultBytes: breach leaves the pool healthy',
      { javascript: "return 'x'.repeat(100000);", python: "'x' * 100000" },
      {
        limits: { resultBytes: 1_000 },
        code: 'RESULT_LIMIT',
      },
    );

    g.program(
      'a memory limit that the program fits in is not hit',
      {
        javascript: 'const a = new Uint8Array(1024 * 1024);\nreturn a.length;',
        python: 'a = bytearray(1024 * 1024)\nlen(a)',
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src, { limits: { memoryBytes: 16 * MiB } }))).toBe(MiB);
      },
    );
  });
}
