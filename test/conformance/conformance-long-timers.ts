import { expect } from 'vitest';
import type { Group, PerLanguage, SuiteOptions } from './harness.ts';
import { defineGroup, expectFailed, expectSucceeded } from './harness.ts';

/** Delays at and past what one Node timer holds (2^31-1 ms), as each language writes them. */
const LONG_DELAYS: readonly { name: string; js: string; py: string }[] = [
  { name: '2**31 ms', js: '2 ** 31', py: '2 ** 31 / 1000' },
  { name: '2**32 + 5 ms', js: '2 ** 32 + 5', py: '(2 ** 32 + 5) / 1000' },
  { name: '2**40 ms', js: '2 ** 40', py: '2 ** 40 / 1000' },
  { name: 'Infinity', js: 'Infinity', py: "float('inf')" },
];

/** Every way each language sleeps, given a delay expression. */
const SLEEPS: readonly { name: string; programs: (d: { js: string; py: string }) => PerLanguage<string> }[] =
  [
    {
      name: 'setTimeout / time.sleep',
      programs: (d) => ({
        javascript: `await new Promise((r) => setTimeout(r, ${d.js}));\nconsole.log('woke');\nreturn 'woke';`,
        python: `import time\ntime.sleep(${d.py})\nprint('woke')\n'woke'`,
      }),
    },
    {
      name: 'a timer callback / asyncio.sleep',
      programs: (d) => ({
        javascript: `setTimeout(() => console.log('woke'), ${d.js});\nawait new Promise(() => {});`,
        python: `import asyncio\nawait asyncio.sleep(${d.py})\nprint('woke')\n'woke'`,
      }),
    },
    {
      name: 'two timers racing / loop.call_later',
      programs: (d) => ({
        javascript: `await Promise.race([new Promise((r) => setTimeout(r, ${d.js})), new Promise((r) => setTimeout(r, ${d.js} + 1))]);\nreturn 'woke';`,
        python: [
          'import asyncio',
          'loop = asyncio.get_running_loop()',
          'f = loop.create_future()',
          `loop.call_later(${d.py}, f.set_result, 'woke')`,
          'await f',
        ].join('\n'),
      }),
    },
  ];

function sleepCases(g: Group): void {
  for (const sleep of SLEEPS) {
    for (const delay of LONG_DELAYS) {
      g.program(
        `a guest sleep of ${delay.name} (${sleep.name}) never wakes early: the execution is TIMEOUT`,
        sleep.programs(delay),
        async (src) => {
          const result = await g.run(src, { limits: { timeoutMs: 400 } });
          expectFailed(result, 'TIMEOUT');
          expect(result.logs.map((l) => l.message)).not.toContain('woke');
        },
        15_000,
      );
    }
  }
}

/** Issue 15 class 11: Node fires a timer of 2^31 ms or more after 1 ms; no delay a program or a limit sets may. */
export function registerLongTimerCases(options: SuiteOptions): void {
  defineGroup(options, 'long timers', (g) => {
    sleepCases(g);
    // 2,147,483,000 ms is the HTTP API's largest timeout_seconds: a driver's grace on top of it passed 2^31 - 1.
    for (const timeoutMs of [2_147_483_000, 2 ** 31, 2 ** 32, 2 ** 40]) {
      g.program(
        `a timeoutMs limit of ${timeoutMs} does not end a short program early`,
        {
          javascript: "await new Promise((r) => setTimeout(r, 30));\nreturn 'done';",
          python: "import time\ntime.sleep(0.03)\n'done'",
        },
        async (src) => {
          expect(expectSucceeded(await g.run(src, { limits: { timeoutMs } }))).toBe('done');
        },
      );
    }
  });
}
