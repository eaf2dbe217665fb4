import { expect } from 'vitest';
import { echoTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectFailed } from './harness.ts';
import type { EscapePrograms } from './escape-support.ts';
import { applicable, expectContained, useHostChecks } from './escape-support.ts';

const MiB = 1024 * 1024;
/** The host process may grow by this much while one hostile program runs (the guest's limit is 32 MiB). */
const HOST_GROWTH_BUDGET = 512 * MiB;

const JS_EXPR = 'a JavaScript program; Python has its own in this family';
const PY_EXPR = 'a Python program; JavaScript has its own in this family';

/** Allocations far over the limit: each must end MEMORY_LIMIT (or another clean code), never grow the host. */
const HUGE: Record<string, EscapePrograms> = {
  'new ArrayBuffer(2 ** 31)': { javascript: 'return new ArrayBuffer(2 ** 31).byteLength;', na: JS_EXPR },
  'new Array(1e9).fill(0)': { javascript: 'return new Array(1e9).fill(0).length;', na: JS_EXPR },
  'Array.from({ length: 1e9 })': { javascript: 'return Array.from({ length: 1e9 }).length;', na: JS_EXPR },
  "'x'.repeat(2 ** 28).split('')": {
    javascript: "return 'x'.repeat(2 ** 28).split('').length;",
    na: JS_EXPR,
  },
  "'x'.padEnd(2 ** 30)": { javascript: "return 'x'.padEnd(2 ** 30).length;", na: JS_EXPR },
  'joining a big array': {
    javascript: "return new Array(1e6).fill('x'.repeat(1000)).join('').length;",
    python: "len(''.join(['x' * 1000] * 10 ** 6))",
  },
  'a Map growth loop': {
    javascript: 'const m = new Map();\nfor (let i = 0; ; i++) m.set(i, { i });',
    python: "m = {}\ni = 0\nwhile True:\n    m[i] = {'i': i}\n    i += 1",
  },
  'JSON.stringify of a big structure': {
    javascript: "const a = new Array(1e7).fill({ k: 'value' });\nreturn JSON.stringify(a).length;",
    python: "import json\na = [{'k': 'value'}] * 10 ** 7\nlen(json.dumps(a))",
  },
  'a huge BigInt power': {
    javascript: 'return (2n ** (2n ** 40n)).toString().length;',
    python: '2 ** (2 ** 40)',
  },
  'a huge tool argument': {
    javascript: "await tools.echo({ s: 'x'.repeat(1e9) });",
    python: "tools.echo(s='x' * 10 ** 9)",
  },
  'typed arrays in a loop': {
    javascript: 'const keep = [];\nwhile (true) keep.push(new Float64Array(1e6));',
    python: 'keep = []\nwhile True:\n    keep.append(bytearray(10 ** 6))',
  },
  'a sparse array made dense': {
    javascript: 'const a = [];\na[1e9] = 1;\nreturn a.map((x) => x).length;',
    na: 'Python lists are never sparse',
  },
  'bytearray(2 ** 31)': { python: 'len(bytearray(2 ** 31))', na: PY_EXPR },
  '[0] * 10 ** 9': { python: 'len([0] * 10 ** 9)', na: PY_EXPR },
  'list(range(10 ** 9))': { python: 'len(list(range(10 ** 9)))', na: PY_EXPR },
  "list('x' * 2 ** 28)": { python: "len(list('x' * 2 ** 28))", na: PY_EXPR },
  "'x'.ljust(2 ** 30)": { python: "len('x'.ljust(2 ** 30))", na: PY_EXPR },
  'doubling bytes': { python: "b = b'x'\nwhile True:\n    b = b + b", na: PY_EXPR },
  'numpy.ones(10 ** 9)': { python: 'import numpy\nnumpy.ones(10 ** 9).sum()', na: PY_EXPR },
  'import pandas (more than the limit)': { python: 'import pandas\n1', na: PY_EXPR },
  'a 1e6-deep list serialized': {
    python: 'import json\na = []\nfor i in range(10 ** 6):\n    a = [a]\njson.dumps(a)',
    na: PY_EXPR,
  },
};

/** Recursion in its many disguises: each must end STACK_OVERFLOW (or another clean code). */
const RECURSION: Record<string, EscapePrograms> = {
  'a recursive arrow': { javascript: 'const f = () => f();\nf();', python: 'f = lambda: f()\nf()' },
  'recursion through an async function': {
    javascript: 'async function f() { return f(); }\nawait f();',
    python: 'async def f():\n    return await f()\nawait f()',
  },
  'recursion through toString': {
    javascript: 'const o = {};\no.toString = () => `${o}`;\nreturn `${o}`;',
    python: "class O:\n    def __str__(self):\n        return f'{self}'\nstr(O())",
  },
  'recursion through a Proxy get trap': {
    javascript: 'const p = new Proxy({}, { get: (t, k, r) => r[k] });\nreturn p.x;',
    python: 'class P:\n    def __getattr__(self, k):\n        return getattr(self, k)\nP().x',
  },
  'recursion through a getter': {
    javascript: 'const o = { get a() { return this.a; } };\nreturn o.a;',
    python: 'class O:\n    @property\n    def a(self):\n        return self.a\nO().a',
  },
  'JSON.stringify of a 1e6-deep array': {
    javascript: 'let a = [];\nfor (let i = 0; i < 1e6; i++) a = [a];\nreturn JSON.stringify(a).length;',
    python: 'import json\na = []\nfor i in range(10 ** 6):\n    a = [a]\nlen(json.dumps(a))',
  },
  'recursion through a tool callback': {
    javascript:
      'const f = async (n) => { await tools.echo({ n }); return g(n); };\nconst g = (n) => 1 + g(n + 1);\nreturn await f(0);',
    python: 'def g(n):\n    return 1 + g(n + 1)\ntools.echo(n=0)\ng(0)',
  },
  'a recursive regular expression replacement': {
    javascript: "const f = (s) => s.replace(/x/, () => f(s));\nreturn f('x');",
    python: "import re\ndef f(s):\n    return re.sub('x', lambda m: f(s), s)\nf('x')",
  },
  'recursion through __eq__ and __hash__': {
    python:
      'class O:\n    def __eq__(self, other):\n        return self == other\n    def __hash__(self):\n        return hash(self)\n{O(): 1}',
    na: PY_EXPR,
  },
  'sys.setrecursionlimit(10 ** 6) and recursion into the C stack': {
    python: 'import sys\nsys.setrecursionlimit(10 ** 6)\ndef f(n):\n    return f(n + 1)\nf(0)',
    na: PY_EXPR,
  },
};

/** CPU traps outside the plain loop: each must end TIMEOUT within the deadline. */
const SPIN: Record<string, EscapePrograms> = {
  'catastrophic regex backtracking': {
    javascript: "return /^(a+)+$/.test('a'.repeat(40) + 'b');",
    python: "import re\nre.match(r'^(a+)+$', 'a' * 40 + 'b')",
  },
  'a looping sort comparator': {
    javascript: 'return [3, 1, 2].sort(() => { while (true) {} });',
    python:
      'import functools\ndef cmp(a, b):\n    while True:\n        pass\nsorted([3, 1, 2], key=functools.cmp_to_key(cmp))',
  },
  'an endless microtask chain': {
    javascript: 'const f = () => { Promise.resolve().then(f); };\nf();\nawait new Promise(() => {});',
    python: `import asyncio
def f():
    asyncio.get_running_loop().call_soon(f)
async def main():
    f()
    await asyncio.Event().wait()
await main()`,
  },
  'a loop inside a getter called by the runtime': {
    javascript: 'const o = {};\nObject.defineProperty(o, "then", { get() { while (true) {} } });\nawait o;',
    python: 'class O:\n    def __hash__(self):\n        while True:\n            pass\n{O()}',
  },
  'a loop inside a finally': {
    javascript: 'try { return 1; } finally { while (true) {} }',
    python: 'try:\n    final_answer(1)\nfinally:\n    while True:\n        pass',
  },
  'a loop in C (sum of an endless iterator)': {
    python: 'import itertools\nsum(itertools.count())',
    na: PY_EXPR,
  },
  'a blocking select on nothing': { python: 'import select\nselect.select([], [], [])', na: PY_EXPR },
  'a thread waiting forever': { python: 'import threading\nthreading.Event().wait()', na: PY_EXPR },
  'reading the protocol fd': { python: 'import os\nos.read(4, 1)', na: PY_EXPR },
};

export function registerResourceEscapes(options: SuiteOptions): void {
  defineGroup(options, 'escape: resources', (g) => {
    useHostChecks(g);

    for (const [name, programs] of applicable(g, 'memory', HUGE)) {
      g.program(
        `${name} stays within the memory limit`,
        programs,
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

    for (const [name, programs] of applicable(g, 'recursion', RECURSION)) {
      g.program(
        `${name} is contained`,
        programs,
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

    for (const [name, programs] of applicable(g, 'CPU', SPIN)) {
      g.program(`${name} ends with TIMEOUT`, programs, async (src) => {
        const { result } = await expectContained(g, src, { limits: { timeoutMs: 500 } });
        expectFailed(result, 'TIMEOUT');
      });
    }
  });
}
