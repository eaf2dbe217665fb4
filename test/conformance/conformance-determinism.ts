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

export function registerDeterminismCases(options: SuiteOptions): void {
  defineGroup(options, 'determinism', (g) => {
    g.program(
      'seed seeds Math.random: same seed, same sequence; another seed, another sequence',
      { javascript: 'return Array.from({ length: 5 }, () => Math.random());' },
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
      { javascript: 'return Date.now();' },
      async (src) => {
        const before = Date.now();
        const v = expectSucceeded(await g.run(src)) as number;
        expect(v).toBeGreaterThanOrEqual(before - 5_000);
        expect(v).toBeLessThanOrEqual(Date.now() + 5_000);
      },
    );

    g.program(
      'same seed, clock sequence and tools give identical results and logs',
      { javascript: MIXED_JS },
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
      },
      async (src) => {
        const result = await g.run(src);
        expect(expectSucceeded(result)).toEqual(['a', 'b']);
        expect(result.resources.wallMs).toBeGreaterThanOrEqual(70);
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
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toBe(false);
      },
    );
  });
}
