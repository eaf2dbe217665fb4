import { expect } from 'vitest';
import type { LogEntry } from '../../src/spec/index.ts';
import { defineTool } from '../../src/tools/index.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectFailed, expectSucceeded } from './harness.ts';

export function registerConsoleCases(options: SuiteOptions): void {
  defineGroup(options, 'console', (g) => {
    g.program(
      'each console level becomes a log entry, in order',
      {
        javascript:
          "console.log('a');\nconsole.info('b');\nconsole.warn('c');\nconsole.error('d');\nconsole.debug('e');",
        // Python has two levels: stdout is `log`, stderr is `error`; they interleave in the order written.
        python:
          "import sys\nprint('a')\nprint('b', file=sys.stderr)\nprint('c')\nsys.stderr.write('d\\n')\nprint('e')",
      },
      async (src) => {
        const result = await g.run(src);
        expectSucceeded(result);
        expect(result.logs).toEqual(
          g.language === 'python'
            ? [
                { level: 'log', message: 'a' },
                { level: 'error', message: 'b' },
                { level: 'log', message: 'c' },
                { level: 'error', message: 'd' },
                { level: 'log', message: 'e' },
              ]
            : [
                { level: 'log', message: 'a' },
                { level: 'info', message: 'b' },
                { level: 'warn', message: 'c' },
                { level: 'error', message: 'd' },
                { level: 'debug', message: 'e' },
              ],
        );
      },
    );

    g.program(
      'strings are verbatim and arguments are joined by a space',
      {
        javascript:
          "console.log('x', 'y  z', 1, true, null, undefined);\nconsole.log('line1\\nline2 \\u2713 \"q\"');",
        python: "print('x', 'y  z', 1, True, None)\nprint('line1\\nline2 \\u2713 \"q\"')",
      },
      async (src) => {
        const result = await g.run(src);
        expectSucceeded(result);
        expect(result.logs.map((l) => l.message)).toEqual([
          // Each language prints its own literals.
          g.language === 'python' ? 'x y  z 1 True None' : 'x y  z 1 true null undefined',
          'line1\nline2 \u2713 "q"',
        ]);
      },
    );

    g.program(
      'objects are rendered as JSON-like text',
      {
        javascript: "console.log({ alpha: 1, beta: [2, 'gamma'] });\nconsole.log('n', [1, 2]);",
        python: "print({'alpha': 1, 'beta': [2, 'gamma']})\nprint('n', [1, 2])",
      },
      async (src) => {
        const result = await g.run(src);
        expectSucceeded(result);
        const [first, second] = result.logs.map((l) => l.message);
        expect(first).toMatch(/alpha.*1.*beta.*2.*gamma/s);
        expect(first).not.toContain('[object Object]');
        expect(second).toMatch(/^n \[\s*1,\s*2\s*\]$/);
      },
    );

    g.program(
      'an Error is rendered with its message',
      {
        javascript: "console.error(new Error('went wrong'));",
        python: "import sys\nprint(Exception('went wrong'), file=sys.stderr)",
      },
      async (src) => {
        const result = await g.run(src);
        expectSucceeded(result);
        expect(result.logs[0]?.level).toBe('error');
        expect(result.logs[0]?.message).toContain('went wrong');
      },
    );

    g.program(
      'logs are kept when the program fails',
      {
        javascript: "console.log('before');\nthrow new Error('after');",
        python: "print('before')\nraise Exception('after')",
      },
      async (src) => {
        const result = await g.run(src);
        expectFailed(result, 'GUEST_ERROR');
        expect(result.logs).toEqual([{ level: 'log', message: 'before' }]);
      },
    );

    g.program(
      'output over limits.outputBytes is OUTPUT_LIMIT and what is kept stays within it',
      {
        javascript:
          "for (let i = 0; i < 100; i++) console.log(String(i).padStart(100, '.'));\nreturn 'finished';",
        python: "for i in range(100):\n    print(str(i).rjust(100, '.'))\n'finished'",
      },
      async (src) => {
        const result = await g.run(src, { limits: { outputBytes: 1000 } });
        expectFailed(result, 'OUTPUT_LIMIT');
        const kept = result.logs.reduce((n, l) => n + Buffer.byteLength(l.message), 0);
        expect(kept).toBeLessThanOrEqual(1000);
      },
    );

    g.program(
      'output within limits.outputBytes is fine',
      {
        javascript: "for (let i = 0; i < 5; i++) console.log('0123456789');",
        python: "for i in range(5):\n    print('0123456789')",
      },
      async (src) => {
        const result = await g.run(src, { limits: { outputBytes: 1000 } });
        expectSucceeded(result);
        expect(result.logs).toHaveLength(5);
      },
    );

    g.program(
      'onLog receives entries as they happen',
      {
        javascript: "console.log('first');\nawait tools.probe({});\nconsole.warn('second');\nreturn 1;",
        // Python has no warn level: the second entry goes to stderr.
        python: "import sys\nprint('first')\ntools.probe()\nprint('second', file=sys.stderr)\n1",
      },
      async (src) => {
        const streamed: LogEntry[] = [];
        let seenDuringTool: LogEntry[] = [];
        const probe = defineTool({
          name: 'probe',
          description: 'records what onLog saw so far',
          execute: () => {
            seenDuringTool = [...streamed];
            return null;
          },
        });
        const result = await g.run(src, { tools: [probe], onLog: (e) => streamed.push(e) });
        expectSucceeded(result);
        expect(seenDuringTool).toEqual([{ level: 'log', message: 'first' }]);
        expect(streamed).toEqual([
          { level: 'log', message: 'first' },
          { level: g.language === 'python' ? 'error' : 'warn', message: 'second' },
        ]);
        expect(result.logs).toEqual(streamed);
      },
    );
  });
}
