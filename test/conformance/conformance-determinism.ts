import { expect } from 'vitest';
import { echoTool, sleepTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectSucceeded } from './harness.ts';

const EPOCH = 1_700_000_000_000;

/** A clock that advances one second at every read and remembers what it returned. */
function steppingClock(): { clock: () => number; reads: number[] } {
  const reads: number[] = [];
  let t = EPOCH;
  return {
    reads,
    clock: () => {
      t += 1000;
      reads.push(t);
      return t;
    },
  };
}

const MIXED_JS = `const r1 = Math.random();
const t0 = Date.now();
const note = (v) => { console.log('done', v, Date.now()); return v; };
const results = await Promise.all([
  tools.sleep({ ms: 120, tag: 'slow' }).then(note),
  tools.sleep({ ms: 10, tag: 'fast' }).then(note),
  tools.sleep({ ms: 60, tag: 'mid' }).then(note),
]);
const r2 = Math.random();
console.log('randoms', r1, r2, { t0 });
return { r1, r2, t0, t1: Date.now(), results };`;

/** MIXED_JS in Python: three sleeps at once (asyncio.gather), a log line as each settles, random and the clock. */
const MIXED_PY = `import asyncio, random, time

now = lambda: time.time_ns() // 1_000_000
r1 = random.random()
t0 = now()
async def note(pending):
    v = await pending
    print('done', v, now())
    return v
results = await asyncio.gather(
    note(tools.sleep_async(ms=120, tag='slow')),
    note(tools.sleep_async(ms=10, tag='fast')),
    note(tools.sleep_async(ms=60, tag='mid')),
)
r2 = random.random()
print('randoms', r1, r2, {'t0': t0})
{'r1': r1, 'r2': r2, 't0': t0, 't1': now(), 'results': results}`;

export function registerDeterminismCases(options: SuiteOptions): void {
  defineGroup(options, 'determinism', (g) => {
    g.program(
      'seed seeds Math.random: same seed, same sequence; another seed, another sequence',
      {
        javascript: 'return Array.from({ length: 5 }, () => Math.random());',
        python: 'import random\n\n[random.random() for _ in range(5)]',
      },
      async (src) => {
        const a = expectSucceeded(await g.run(src, { seed: 42 })) as number[];
        const b = expectSucceeded(await g.run(src, { seed: 42 })) as number[];
        const c = expectSucceeded(await g.run(src, { seed: 43 })) as number[];
        expect(a).toHaveLength(5);
        for (const n of a) expect(n >= 0 && n < 1).toBe(true);
        expect(new Set(a).size).toBe(5);
        expect(b).toEqual(a);
        expect(c).not.toEqual(a);
      },
    );

    g.program(
      'Date.now() and new Date() come from clock, do not move during a CPU loop, and advance at tool outcomes',
      {
        javascript: `const a = Date.now();
const d = new Date().getTime();
let x = 0;
for (let i = 0; i < 1e6; i++) x += i;
const b = Date.now();
await tools.echo({});
const c = Date.now();
return { a, b, c, d, x: x > 0 };`,
        python: `import datetime, time

a = time.time_ns() // 1_000_000
d = round(datetime.datetime.now(datetime.timezone.utc).timestamp() * 1000)
x = 0
for i in range(10**6):
    x += i
b = time.time_ns() // 1_000_000
tools.echo()
c = time.time_ns() // 1_000_000
{'a': a, 'b': b, 'c': c, 'd': d, 'x': x > 0}`,
      },
      async (src) => {
        const { clock, reads } = steppingClock();
        const v = expectSucceeded(await g.run(src, { clock, tools: [echoTool()] })) as Record<string, number>;
        expect(reads).toContain(v.a);
        expect(v.b).toBe(v.a);
        expect(v.d).toBe(v.a);
        expect(v.c).toBeGreaterThan(v.a as number);
        expect(reads).toContain(v.c);
      },
    );

    g.program(
      'without clock, Date.now() is the host time',
      { javascript: 'return Date.now();', python: 'import time\n\ntime.time_ns() // 1_000_000' },
      async (src) => {
        const before = Date.now();
        const v = expectSucceeded(await g.run(src)) as number;
        expect(v).toBeGreaterThanOrEqual(before - 5_000);
        expect(v).toBeLessThanOrEqual(Date.now() + 5_000);
      },
    );

    g.program(
      'same seed, clock sequence and tools give identical results and logs',
      { javascript: MIXED_JS, python: MIXED_PY },
      async (src) => {
        const runOnce = () => g.run(src, { seed: 7, clock: steppingClock().clock, tools: [sleepTool()] });
        const first = await runOnce();
        const second = await runOnce();
        const v1 = expectSucceeded(first) as { r1: number; r2: number; results: string[] };
        expect(expectSucceeded(second)).toEqual(v1);
        expect(second.logs).toEqual(first.logs);
        expect(v1.results).toEqual(['slow', 'fast', 'mid']);
        expect(v1.r1).not.toBe(v1.r2);
        expect(first.logs.map((l) => l.message.split(' ').slice(0, 2).join(' '))).toEqual([
          'done fast',
          'done mid',
          'done slow',
          expect.stringMatching(/^randoms /) as unknown as string,
        ]);
      },
    );

    g.program(
      'setTimeout fires in delay order',
      {
        javascript: `const order = [];
setTimeout(() => order.push('b'), 40);
setTimeout(() => order.push('a'), 10);
await new Promise((r) => setTimeout(r, 80));
await new Promise((r) => setTimeout(r));
return order;`,
        // Python's timers are asyncio.sleep (host timers, like setTimeout): each callback is a task that sleeps.
        python: `import asyncio

order = []
async def later(seconds, name):
    await asyncio.sleep(seconds)
    order.append(name)
asyncio.ensure_future(later(0.04, 'b'))
asyncio.ensure_future(later(0.01, 'a'))
await asyncio.sleep(0.08)
await asyncio.sleep(0)
order`,
      },
      async (src) => {
        const result = await g.run(src);
        expect(expectSucceeded(result)).toEqual(['a', 'b']);
        expect(result.resources.wallMs).toBeGreaterThanOrEqual(70);
      },
    );

    g.program(
      'random bytes and UUIDs come from the seed: same seed, same values; another seed, others',
      {
        javascript: 'return [crypto.randomUUID(), Array.from(crypto.getRandomValues(new Uint8Array(8)))];',
        python: 'import os, uuid\n\n[str(uuid.uuid4()), list(os.urandom(8))]',
      },
      async (src) => {
        const a = expectSucceeded(await g.run(src, { seed: 42 })) as [string, number[]];
        const b = expectSucceeded(await g.run(src, { seed: 42 })) as [string, number[]];
        const c = expectSucceeded(await g.run(src, { seed: 43 })) as [string, number[]];
        expect(a[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(a[1]).toHaveLength(8);
        expect(b).toEqual(a);
        expect(c[0]).not.toBe(a[0]);
        expect(c[1]).not.toEqual(a[1]);
      },
    );

    g.program(
      'a repeating timer (setInterval / a sleeping asyncio task) ticks until cleared, then never again',
      {
        javascript: `const ticks = [];
const h = setInterval(() => ticks.push(ticks.length), 10);
while (ticks.length < 3) await new Promise((r) => setTimeout(r, 5));
clearInterval(h);
const n = ticks.length;
await new Promise((r) => setTimeout(r, 50));
return [n, ticks.length];`,
        python: `import asyncio

ticks = []
async def every(seconds):
    while True:
        await asyncio.sleep(seconds)
        ticks.append(len(ticks))
task = asyncio.ensure_future(every(0.01))
while len(ticks) < 3:
    await asyncio.sleep(0.005)
task.cancel()
n = len(ticks)
await asyncio.sleep(0.05)
[n, len(ticks)]`,
      },
      async (src) => {
        const result = await g.run(src);
        const [n, after] = expectSucceeded(result) as [number, number];
        expect(n).toBeGreaterThanOrEqual(3);
        expect(after).toBe(n);
        expect(result.resources.wallMs).toBeGreaterThanOrEqual(75);
      },
    );

    g.program(
      'clearTimeout cancels',
      {
        javascript: `let fired = false;
const id = setTimeout(() => { fired = true; }, 10);
clearTimeout(id);
await new Promise((r) => setTimeout(r, 50));
return fired;`,
        // The task is cancelled once its timer is pending (after the first sleep(0) it waits on it).
        python: `import asyncio

fired = False
async def later():
    global fired
    await asyncio.sleep(0.01)
    fired = True
timer = asyncio.ensure_future(later())
await asyncio.sleep(0)
timer.cancel()
await asyncio.sleep(0.05)
fired`,
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toBe(false);
      },
    );
  });
}
