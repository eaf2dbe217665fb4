import { expect } from 'vitest';
import { echoTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectFailed } from './harness.ts';
import { expectContained, useHostChecks } from './escape-support.ts';

const MiB = 1024 * 1024;
/** The host process may grow by this much while one hostile program runs (the guest's limit is 32 MiB). */
const HOST_GROWTH_BUDGET = 512 * MiB;

/** Allocations far over the limit: each must end MEMORY_LIMIT (or another clean code), never grow the host. */
const HUGE: Record<string, string> = {
  'new ArrayBuffer(2 ** 31)': 'return new ArrayBuffer(2 ** 31).byteLength;',
  'new Array(1e9).fill(0)': 'return new Array(1e9).fill(0).length;',
  'Array.from({ length: 1e9 })': 'return Array.from({ length: 1e9 }).length;',
  "'x'.repeat(2 ** 28).split('')": "return 'x'.repeat(2 ** 28).split('').length;",
  "'x'.padEnd(2 ** 30)": "return 'x'.padEnd(2 ** 30).length;",
  'joining a big array': "return new Array(1e6).fill('x'.repeat(1000)).join('').length;",
  'a Map growth loop': 'const m = new Map();\nfor (let i = 0; ; i++) m.set(i, { i });',
  'JSON.stringify of a big structure':
    "const a = new Array(1e7).fill({ k: 'value' });\nreturn JSON.stringify(a).length;",
  'a huge BigInt power': 'return (2n ** (2n ** 40n)).toString().length;',
  'a huge tool argument': "await tools.echo({ s: 'x'.repeat(1e9) });",
  'typed arrays in a loop': 'const keep = [];\nwhile (true) keep.push(new Float64Array(1e6));',
  'a sparse array made dense': 'const a = [];\na[1e9] = 1;\nreturn a.map((x) => x).length;',
};

/** Recursion in its many disguises: each must end STACK_OVERFLOW (or another clean code). */
const RECURSION: Record<string, string> = {
  'a recursive arrow': 'const f = () => f();\nf();',
  'recursion through an async function': 'async function f() { return f(); }\nawait f();',
  'recursion through toString': 'const o = {};\no.toString = () => `${o}`;\nreturn `${o}`;',
  'recursion through a Proxy get trap': 'const p = new Proxy({}, { get: (t, k, r) => r[k] });\nreturn p.x;',
  'recursion through a getter': 'const o = { get a() { return this.a; } };\nreturn o.a;',
  'JSON.stringify of a 1e6-deep array':
    'let a = [];\nfor (let i = 0; i < 1e6; i++) a = [a];\nreturn JSON.stringify(a).length;',
  'recursion through a tool callback':
    'const f = async (n) => { await tools.echo({ n }); return g(n); };\nconst g = (n) => 1 + g(n + 1);\nreturn await f(0);',
  'a recursive regular expression replacement':
    "const f = (s) => s.replace(/x/, () => f(s));\nreturn f('x');",
};

/** CPU traps outside the plain loop: each must end TIMEOUT within the deadline. */
const SPIN: Record<string, string> = {
  'catastrophic regex backtracking': "return /^(a+)+$/.test('a'.repeat(40) + 'b');",
  'a looping sort comparator': 'return [3, 1, 2].sort(() => { while (true) {} });',
  'an endless microtask chain':
    'const f = () => { Promise.resolve().then(f); };\nf();\nawait new Promise(() => {});',
  'a loop inside a getter called by the runtime':
    'const o = {};\nObject.defineProperty(o, "then", { get() { while (true) {} } });\nawait o;',
  'a loop inside a finally': 'try { return 1; } finally { while (true) {} }',
};

function programs(cases: Record<string, string>): Record<string, { javascript: string }> {
  return Object.fromEntries(Object.entries(cases).map(([k, v]) => [k, { javascript: v }]));
}

export function registerResourceEscapes(options: SuiteOptions): void {
  defineGroup(options, 'escape: resources', (g) => {
    useHostChecks(g);

    for (const [name, { javascript }] of Object.entries(programs(HUGE))) {
      g.program(
        `${name} stays within the memory limit`,
        { javascript },
        async (src) => {
          const before = process.memoryUsage().rss;
          const { result } = await expectContained(g, src, {
            tools: [echoTool()],
            limits: { memoryBytes: 32 * MiB, timeoutMs: 5_000 },
          });
          expect(process.memoryUsage().rss - before).toBeLessThan(HOST_GROWTH_BUDGET);
          expect(result.status).toBe('failed');
          if (result.status === 'failed')
            expect(['MEMORY_LIMIT', 'GUEST_ERROR', 'TIMEOUT']).toContain(result.error.code);
        },
        30_000,
      );
    }

    for (const [name, { javascript }] of Object.entries(programs(RECURSION))) {
      g.program(
        `${name} is contained`,
        { javascript },
        async (src) => {
          const { result } = await expectContained(g, src, {
            tools: [echoTool()],
            limits: { memoryBytes: 64 * MiB, timeoutMs: 5_000 },
          });
          expect(result.status).toBe('failed');
        },
        30_000,
      );
    }

    for (const [name, { javascript }] of Object.entries(programs(SPIN))) {
      g.program(`${name} ends with TIMEOUT`, { javascript }, async (src) => {
        const { result } = await expectContained(g, src, { limits: { timeoutMs: 500 } });
        expectFailed(result, 'TIMEOUT');
      });
    }
  });
}
