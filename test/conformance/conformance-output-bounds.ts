import { expect } from 'vitest';
import type { ExecutionResult } from '../../src/spec/index.ts';
import type { PerLanguage, SuiteOptions } from './harness.ts';
import { defineGroup, expectFailed } from './harness.ts';

const MiB = 1024 * 1024;
/** The default outputBytes (1 MiB) over the 17 bytes an empty entry counts (its newline and 16 of overhead). */
const MAX_EMPTY_ENTRIES = Math.floor(MiB / 17);

/** A million lines with nothing on them, written every way each language can. */
const EMPTY_FLOODS: readonly [string, PerLanguage<string>][] = [
  [
    'console.log() / print()',
    {
      javascript: "for (let i = 0; i < 1e6; i++) console.log();\nreturn 'done';",
      python: "for i in range(1_000_000):\n    print()\n'done'",
    },
  ],
  [
    "console.log('') / sys.stdout.write('\\n')",
    {
      javascript: "for (let i = 0; i < 1e6; i++) console.log('');\nreturn 'done';",
      python: "import sys\nfor i in range(1_000_000):\n    sys.stdout.write('\\n')\n'done'",
    },
  ],
  [
    'console.error() / raw newlines on fd 1',
    {
      javascript: "for (let i = 0; i < 1e6; i++) console.error();\nreturn 'done';",
      python: "import os\nfor i in range(100):\n    os.write(1, b'\\n' * 10_000)\n'done'",
    },
  ],
  [
    'console.warn("") / raw newlines on fd 2',
    {
      javascript: "for (let i = 0; i < 1e6; i++) console.warn('');\nreturn 'done';",
      python: "import os\nfor i in range(100):\n    os.write(2, b'\\n' * 10_000)\n'done'",
    },
  ],
];

/** Output of newlines only, in one write: every newline is a byte of output. */
const NEWLINES_ONLY: readonly [string, PerLanguage<string>][] = [
  [
    'one entry of 2 MB of newlines',
    {
      javascript: "console.log('\\n'.repeat(2_000_000));\nreturn 'done';",
      python: "print('\\n' * 2_000_000)\n'done'",
    },
  ],
  [
    '2 MB of newlines in big writes',
    {
      javascript:
        "const nl = '\\n'.repeat(100_000);\nfor (let i = 0; i < 20; i++) console.log(nl);\nreturn 'done';",
      python: "import os\nfor i in range(20):\n    os.write(1, b'\\n' * 100_000)\n'done'",
    },
  ],
];

/** Errors whose text is far larger than anything the host keeps. */
const HUGE_ERRORS: readonly [string, PerLanguage<string>][] = [
  [
    'an uncaught Error with a 5 MB message',
    {
      javascript: "throw new Error('x'.repeat(5_000_000));",
      python: "raise Exception('x' * 5_000_000)",
    },
  ],
  [
    'a ToolError with a 5 MB message',
    {
      javascript: "throw new ToolError('y'.repeat(5_000_000), 'E_BIG');",
      python: "raise ToolError('y' * 5_000_000, 'E_BIG')",
    },
  ],
  [
    'a ToolError with 2 MB of details',
    {
      javascript: "throw new ToolError('big details', 'E_BIG', { blob: 'z'.repeat(2_000_000) });",
      python: "raise ToolError('big details', 'E_BIG', {'blob': 'z' * 2_000_000})",
    },
  ],
  [
    'an error whose name is 1 MB',
    {
      javascript:
        "class E extends Error {}\nObject.defineProperty(E.prototype, 'name', { value: 'N'.repeat(1_000_000) });\nthrow new E('named');",
      python: "raise type('N' * 1_000_000, (Exception,), {})('named')",
    },
  ],
];

function rssGrowth(before: number): number {
  return process.memoryUsage().rss - before;
}

/** Issue 15 class 8: the output limit counts every byte and every entry; errors are bounded like results. */
export function registerOutputBoundCases(options: SuiteOptions): void {
  defineGroup(options, 'output and error bounds', (g) => {
    for (const [name, programs] of EMPTY_FLOODS) {
      g.program(
        `a million empty lines (${name}) are OUTPUT_LIMIT, the host's memory bounded`,
        programs,
        async (src) => {
          const before = process.memoryUsage().rss;
          const result = await g.run(src, { limits: { timeoutMs: 60_000 } });
          expectFailed(result, 'OUTPUT_LIMIT');
          expect(result.logs.length).toBeLessThanOrEqual(MAX_EMPTY_ENTRIES);
          // Generous: a million kept entries cost the host well over 100 MiB.
          expect(rssGrowth(before), "the host's memory").toBeLessThan(96 * MiB);
        },
        90_000,
      );
    }
    for (const [name, programs] of NEWLINES_ONLY) {
      g.program(
        `output of newlines only (${name}) counts every newline: OUTPUT_LIMIT`,
        programs,
        async (src) => {
          const result = await g.run(src);
          expectFailed(result, 'OUTPUT_LIMIT');
          const kept = result.logs.reduce((n, l) => n + Buffer.byteLength(l.message) + 1, 0);
          expect(kept).toBeLessThanOrEqual(MiB);
        },
        30_000,
      );
    }
    g.program(
      'an entry costs its bytes, its newline and 16 bytes: 50 entries of 3 bytes fit in 1000, 60 do not',
      {
        javascript: "for (let i = 0; i < Number(N); i++) console.log('abc');\nreturn 'done';",
        python: "for i in range(int(N)):\n    print('abc')\n'done'",
      },
      async (src) => {
        const run = (n: number): Promise<ExecutionResult> =>
          g.run(
            {
              ...src,
              code: src.language === 'python' ? `N = ${n}\n${src.code}` : `const N = ${n};\n${src.code}`,
            },
            { limits: { outputBytes: 1000 } },
          );
        const fits = await run(50);
        expect(fits.status).toBe('succeeded');
        expect(fits.logs).toHaveLength(50);
        expectFailed(await run(60), 'OUTPUT_LIMIT');
      },
    );
    for (const [name, programs] of HUGE_ERRORS) {
      g.program(
        `${name} is kept bounded, cut with a marker`,
        programs,
        async (src) => {
          const result = await g.run(src, { limits: { memoryBytes: 256 * MiB } });
          expect(result.status).toBe('failed');
          if (result.status !== 'failed') return;
          const { message, name: errorName, details } = result.error;
          expect(message.length).toBeLessThanOrEqual(16 * 1024 + 64);
          if (message.length > 16 * 1024) expect(message).toMatch(/more characters cut\]$/);
          expect((errorName ?? '').length).toBeLessThanOrEqual(256 + 64);
          expect(JSON.stringify(details ?? {}).length).toBeLessThanOrEqual(64 * 1024);
        },
        30_000,
      );
    }
  });
}
