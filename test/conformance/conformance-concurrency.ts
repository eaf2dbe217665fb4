import { expect } from 'vitest';
import { defineTool } from '../../src/tools/index.ts';
import { newToolLog, sleepTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectFailed, expectSucceeded, timed } from './harness.ts';

export function registerConcurrencyCases(options: SuiteOptions): void {
  defineGroup(options, 'concurrency', (g) => {
    g.program(
      'Promise.all of three 200 ms tools runs them in parallel',
      {
        javascript:
          'return await Promise.all([tools.sleep({ ms: 200 }), tools.sleep({ ms: 200 }), tools.sleep({ ms: 200 })]);',
        python: 'import asyncio\n\nawait asyncio.gather(*[tools.sleep_async(ms=200) for _ in range(3)])',
      },
      async (src) => {
        const log = newToolLog();
        const value = await g.run(src, { tools: [sleepTool(log)] });
        expect(expectSucceeded(value)).toEqual([200, 200, 200]);
        // Three running at once is the proof; wall time includes interpreter start (a benchmark's job, not a test's).
        expect(log.maxRunning).toBe(3);
      },
    );

    g.program(
      'a timer beats a slow tool call (Promise.race, asyncio.wait_for) and fires while tools run',
      {
        javascript: `const winner = await Promise.race([
  tools.sleep({ ms: 3000 }).then(() => 'tool'),
  new Promise((r) => setTimeout(() => r('timeout'), 100)),
]);
const fired = [];
setTimeout(() => fired.push('later'), 50);
await tools.sleep({ ms: 300 });
return [winner, fired];`,
        python: `import asyncio

async def race():
    try:
        await asyncio.wait_for(tools.sleep_async(ms=3000), 0.1)
        return 'tool'
    except asyncio.TimeoutError:
        return 'timeout'
winner = await race()
fired = []
asyncio.get_running_loop().call_later(0.05, lambda: fired.append('later'))
await tools.sleep_async(ms=300)
[winner, fired]`,
      },
      async (src) => {
        const { value, ms } = await timed(() => g.run(src, { tools: [sleepTool()] }));
        expect(expectSucceeded(value)).toEqual(['timeout', ['later']]);
        expect(ms).toBeLessThan(2_000);
      },
    );

    g.program(
      'maxConcurrentToolCalls bounds the calls running at once; the rest wait their turn',
      {
        javascript:
          'return await Promise.all([1, 2, 3, 4, 5, 6].map((i) => tools.sleep({ ms: 40, tag: i })));',
        python:
          'import asyncio\n\nawait asyncio.gather(*[tools.sleep_async(ms=40, tag=i) for i in range(1, 7)])',
      },
      async (src) => {
        const log = newToolLog();
        const result = await g.run(src, { tools: [sleepTool(log)], limits: { maxConcurrentToolCalls: 2 } });
        expect(expectSucceeded(result)).toEqual([1, 2, 3, 4, 5, 6]);
        expect(log.maxRunning).toBe(2);
        expect(result.resources.toolCalls).toBe(6);
      },
    );

    g.program(
      'concurrent executions are isolated from each other',
      {
        javascript: `const id = await tools.whoami({});
globalThis.mine = id;
await tools.sleep({ ms: 30 });
return { id, still: globalThis.mine };`,
        // builtins is Python's globalThis: every module of the interpreter sees it.
        python: `import builtins

id = tools.whoami()
builtins.mine = id
tools.sleep(ms=30)
{'id': id, 'still': builtins.mine}`,
      },
      async (src) => {
        const runs = Array.from({ length: 8 }, (_, i) => {
          const whoami = defineTool({
            name: 'whoami',
            description: 'id of this run',
            execute: () => `run-${i}`,
          });
          return g.run(src, { tools: [whoami, sleepTool()] });
        });
        const results = await Promise.all(runs);
        results.forEach((r, i) => expect(expectSucceeded(r)).toEqual({ id: `run-${i}`, still: `run-${i}` }));
      },
    );

    g.program(
      'a CPU-bound guest does not block the host event loop',
      { javascript: 'while (true) {}', python: 'while True:\n    pass' },
      async (src) => {
        let ticks = 0;
        const timer = setInterval(() => (ticks += 1), 10);
        try {
          expectFailed(await g.run(src, { limits: { timeoutMs: 500 } }), 'TIMEOUT');
        } finally {
          clearInterval(timer);
        }
        expect(ticks).toBeGreaterThanOrEqual(10);
      },
    );

    g.program(
      'more executions than workers all complete',
      {
        javascript:
          'let x = 0;\nfor (let i = 0; i < 1e5; i++) x += i;\nawait tools.sleep({ ms: 20 });\nreturn x;',
        python: 'x = 0\nfor i in range(10**5):\n    x += i\ntools.sleep(ms=20)\nx',
      },
      async (src) => {
        const results = await Promise.all(
          Array.from({ length: 12 }, () => g.run(src, { tools: [sleepTool()] })),
        );
        for (const r of results) expect(expectSucceeded(r)).toBe(4999950000);
      },
    );
  });
}
