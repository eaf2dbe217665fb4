import { expect } from 'vitest';
import { sleepTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectFailed, expectNoHostPaths, expectSucceeded } from './harness.ts';

/** Results & serialization: what a program returns, how it fails, and TypeScript. */
export function registerResultCases(options: SuiteOptions): void {
  defineGroup(options, 'results & serialization', (g) => {
    g.program(
      'returns JSON values',
      {
        javascript: "return { a: 1, b: 'x', c: [true, null, 1.5], d: { e: -2 } };",
        python: "{'a': 1, 'b': 'x', 'c': [True, None, 1.5], 'd': {'e': -2}}",
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toEqual({
          a: 1,
          b: 'x',
          c: [true, null, 1.5],
          d: { e: -2 },
        });
      },
    );

    g.program(
      'the program is an async function body: top-level await and return',
      {
        javascript: 'const v = await Promise.resolve(41);\nreturn v + 1;',
        // Python: top-level await, and the last expression is the value.
        python: 'async def answer():\n    return 41\n\nv = await answer()\nv + 1',
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toBe(42);
      },
    );

    g.program(
      'without a return, the value of the last expression statement is the result',
      {
        javascript: "const r = await tools.sleep({ ms: 1, tag: 'slept' });\nconst n = 40;\n[r, n + 2]",
        python: "r = tools.sleep(ms=1, tag='slept')\nn = 40\n[r, n + 2]",
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src, { tools: [sleepTool()] }))).toEqual(['slept', 42]);
      },
    );

    g.program(
      'a program without return yields undefined',
      // (A Python program ending in an assignment yields its value, as smolagents' do: python-forms.test.ts.)
      { javascript: 'const x = 1;', python: 'import math' },
      async (src) => {
        const result = await g.run(src);
        // Python has no undefined: a program whose last statement has no value yields None.
        if (g.language === 'python') expect(expectSucceeded(result)).toBeNull();
        else expect(expectSucceeded(result)).toBeUndefined();
        expect(result.status === 'succeeded' && 'value' in result).toBe(true);
      },
    );

    g.program(
      'a returned promise is awaited',
      {
        javascript: 'return new Promise((resolve) => setTimeout(() => resolve(5), 10));',
        // An awaitable last expression (here a coroutine, unawaited) is awaited.
        python: 'import asyncio\n\nasyncio.sleep(0.01, 5)',
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toBe(5);
      },
    );

    g.program(
      'undefined survives',
      {
        javascript: 'return { a: undefined, b: [1, undefined, 3] };',
        python: "{'a': None, 'b': [1, None, 3]}",
      },
      async (src) => {
        const value = expectSucceeded(await g.run(src)) as { a?: unknown; b: unknown[] };
        // Python's None is JSON null (it has no undefined); the key and the hole survive all the same.
        const absent = g.language === 'python' ? null : undefined;
        expect(Object.hasOwn(value, 'a')).toBe(true);
        expect(value.a).toBe(absent);
        expect(value.b).toHaveLength(3);
        expect(value.b[1]).toBe(absent);
      },
    );

    g.program(
      'strings round-trip exactly (astral, NUL, lone surrogate, as keys too)',
      {
        javascript: String.raw`const s = '\u{1F600} \0 \uD800 \\ "q" \n';` + '\nreturn { s, [s]: 1 };',
        python: String.raw`s = '\U0001F600 \0 \ud800 \\ "q" \n'` + "\n{'s': s, s: 1}",
      },
      async (src) => {
        const s = '\u{1F600} \0 \uD800 \\ "q" \n';
        expect(expectSucceeded(await g.run(src))).toEqual({ s, [s]: 1 });
      },
    );

    g.program(
      'a Date comes back as a host Date',
      {
        javascript: "return new Date('2020-01-02T03:04:05.678Z');",
        python:
          'import datetime\n\ndatetime.datetime(2020, 1, 2, 3, 4, 5, 678000, tzinfo=datetime.timezone.utc)',
      },
      async (src) => {
        const value = expectSucceeded(await g.run(src));
        expect(value).toBeInstanceOf(Date);
        expect((value as Date).toISOString()).toBe('2020-01-02T03:04:05.678Z');
      },
    );

    g.program(
      'Map and Set survive',
      {
        javascript: "return { m: new Map([['a', 1], [2, { b: 3 }]]), s: new Set([1, 'two']) };",
        // A dict with a key that is not a str is a Map. The set's order is its hash order (the sandbox fixes
        // PYTHONHASHSEED, so it is the same every run).
        python: "{'m': {'a': 1, 2: {'b': 3}}, 's': {1, 'two'}}",
      },
      async (src) => {
        const value = expectSucceeded(await g.run(src)) as { m: unknown; s: unknown };
        expect(value.m).toBeInstanceOf(Map);
        expect([...(value.m as Map<unknown, unknown>)]).toEqual([
          ['a', 1],
          [2, { b: 3 }],
        ]);
        expect(value.s).toBeInstanceOf(Set);
        expect([...(value.s as Set<unknown>)]).toEqual([1, 'two']);
      },
    );

    g.program(
      'BigInt survives',
      { javascript: 'return { big: 2n ** 70n, small: -5n };', python: "{'big': 2 ** 70, 'small': -5}" },
      async (src) => {
        // Python has one int type: only ints beyond 2^53 become BigInts; a small one stays a number.
        const small = g.language === 'python' ? -5 : -5n;
        expect(expectSucceeded(await g.run(src))).toEqual({ big: 1180591620717411303424n, small });
      },
    );

    g.program(
      'NaN and Infinity survive',
      {
        javascript: 'return [NaN, Infinity, -Infinity];',
        python: "[float('nan'), float('inf'), float('-inf')]",
      },
      async (src) => {
        const value = expectSucceeded(await g.run(src)) as number[];
        expect(Number.isNaN(value[0])).toBe(true);
        expect(value.slice(1)).toEqual([Infinity, -Infinity]);
      },
    );

    g.program(
      'shared (acyclic) references are not cycles',
      { javascript: 'const x = { a: 1 };\nreturn [x, x];', python: "x = {'a': 1}\n[x, x]" },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toEqual([{ a: 1 }, { a: 1 }]);
      },
    );

    g.program(
      'a function in the result is RESULT_INVALID naming the path',
      { javascript: 'return { a: [1, { f() { return 1; } }] };', python: "{'a': [1, {'f': lambda: 1}]}" },
      async (src) => {
        expect(expectFailed(await g.run(src), 'RESULT_INVALID').message).toContain('result.a[1].f');
      },
    );

    g.program(
      'a symbol in the result is RESULT_INVALID naming the path',
      // Python has no symbols: its counterpart is a plain object(), which has no data form either.
      { javascript: "return { s: Symbol('x') };", python: "{'s': object()}" },
      async (src) => {
        expect(expectFailed(await g.run(src), 'RESULT_INVALID').message).toContain('result.s');
      },
    );

    g.program(
      'a toJSON method is honoured, as JSON.stringify does',
      {
        javascript: "return { a: 1, nested: { b: 2, toJSON() { return 'replaced'; } } };",
        // Python's counterpart of toJSON is the conversion method numpy and pandas values have (to_dict, tolist).
        python: [
          'class Nested:',
          '    b = 2',
          '    def to_dict(self):',
          "        return 'replaced'",
          '',
          "{'a': 1, 'nested': Nested()}",
        ].join('\n'),
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toEqual({ a: 1, nested: 'replaced' });
      },
    );

    g.program(
      'a toJSON that returns a function is RESULT_INVALID naming the path',
      {
        javascript: 'return { a: 1, nested: { toJSON() { return { f() {} }; } } };',
        python: [
          'class Nested:',
          '    def to_dict(self):',
          "        return {'f': lambda: None}",
          '',
          "{'a': 1, 'nested': Nested()}",
        ].join('\n'),
      },
      async (src) => {
        expect(expectFailed(await g.run(src), 'RESULT_INVALID').message).toContain('result.nested.f');
      },
    );

    g.program(
      'returning a function is RESULT_INVALID',
      { javascript: 'return () => 1;', python: 'lambda: 1' },
      async (src) => {
        expectFailed(await g.run(src), 'RESULT_INVALID');
      },
    );

    g.program(
      'a cycle is RESULT_INVALID',
      {
        javascript: 'const o = { a: [] };\no.a.push(o);\nreturn o;',
        python: "o = {'a': []}\no['a'].append(o)\no",
      },
      async (src) => {
        expectFailed(await g.run(src), 'RESULT_INVALID');
      },
    );

    g.programs(
      'a result over limits.resultBytes is RESULT_LIMIT; under it succeeds',
      {
        javascript: { big: "return 'x'.repeat(5000);", small: "return 'x'.repeat(100);" },
        python: { big: "'x' * 5000", small: "'x' * 100" },
      },
      async (src) => {
        expectFailed(await g.run(src.big, { limits: { resultBytes: 1000 } }), 'RESULT_LIMIT');
        expect(expectSucceeded(await g.run(src.small, { limits: { resultBytes: 1000 } }))).toBe(
          'x'.repeat(100),
        );
      },
    );

    g.program(
      'an uncaught error is GUEST_ERROR with name and line',
      { javascript: 'const a = 1;\nconst o = null;\nreturn o.x + a;', python: 'a = 1\no = None\no + a' },
      async (src) => {
        const error = expectFailed(await g.run(src), 'GUEST_ERROR');
        expect(error.name).toBe('TypeError');
        expect(error.line).toBe(3);
        expectNoHostPaths(JSON.stringify(error));
      },
    );

    g.program(
      'a thrown Error subclass keeps its name and message',
      {
        javascript: "\n\nthrow new RangeError('out of range');",
        python: "class RangeError(ValueError):\n    pass\nraise RangeError('out of range')",
      },
      async (src) => {
        const error = expectFailed(await g.run(src), 'GUEST_ERROR');
        expect(error.name).toBe('RangeError');
        expect(error.message).toContain('out of range');
        expect(error.line).toBe(3);
      },
    );

    g.program(
      'throwing a non-Error is GUEST_ERROR',
      // Python raises only exceptions: the nearest to a non-Error is a BaseException outside Exception.
      { javascript: "throw 'plain string';", python: "raise BaseException('plain string')" },
      async (src) => {
        expect(expectFailed(await g.run(src), 'GUEST_ERROR').message).toContain('plain string');
      },
    );

    g.program(
      'a rejected returned promise is GUEST_ERROR',
      {
        javascript: "return Promise.reject(new SyntaxError('rejected'));",
        python: "async def rejected():\n    raise SyntaxError('rejected')\n\nrejected()",
      },
      async (src) => {
        const error = expectFailed(await g.run(src), 'GUEST_ERROR');
        expect(error.name).toBe('SyntaxError');
      },
    );

    g.program(
      'a syntax error is SYNTAX_ERROR with a line',
      { javascript: 'const x = 1;\nlet = = 2;\nreturn x;', python: 'x = 1\nlet = = 2\nx' },
      async (src) => {
        const error = expectFailed(await g.run(src), 'SYNTAX_ERROR');
        expect(error.line).toBe(2);
      },
    );

    g.program(
      'TypeScript: types are stripped',
      {
        javascript: {
          language: 'typescript',
          code: [
            'interface Point { x: number; y: number }',
            'type Pair<T> = [T, T];',
            'function add(p: Point): number { return p.x + p.y; }',
            'const pair: Pair<number> = [1, 2];',
            'const sum = add({ x: pair[0], y: pair[1] } as Point);',
            'const late = await Promise.resolve<number>(sum);',
            'return late satisfies number;',
          ].join('\n'),
        },
        // Python's counterpart: type hints, which do not change what runs.
        python: [
          'from typing import TypedDict',
          'class Point(TypedDict):',
          '    x: int',
          '    y: int',
          'Pair = tuple[int, int]',
          "def add(p: Point) -> int: return p['x'] + p['y']",
          'pair: Pair = (1, 2)',
          'total: int = add(Point(x=pair[0], y=pair[1]))',
          'async def later(v: int) -> int: return v',
          'late: int = await later(total)',
          'late',
        ].join('\n'),
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toBe(3);
      },
    );

    g.program(
      'TypeScript: line numbers are preserved',
      {
        javascript: {
          language: 'typescript',
          code: [
            'interface Point {',
            '  x: number;',
            '  y: number; }',
            'const p: Point = { x: 1, y: 2 } as Point;',
            "if (p.x > 0) throw new TypeError('line five');",
            'return p;',
          ].join('\n'),
        },
        python: [
          'class Point:',
          '    x: int',
          '    y: int',
          'p: Point = Point()',
          "if p is not None: raise TypeError('line five')",
          'p',
        ].join('\n'),
      },
      async (src) => {
        const error = expectFailed(await g.run(src), 'GUEST_ERROR');
        expect(error.name).toBe('TypeError');
        expect(error.message).toContain('line five');
        expect(error.line).toBe(5);
      },
    );

    g.program(
      'TypeScript: a syntax error is SYNTAX_ERROR',
      {
        javascript: { language: 'typescript', code: 'const x: number = 1;\nconst y: = 2;\nreturn x;' },
        python: 'x: int = 1\ny: = 2\nx',
      },
      async (src) => {
        expectFailed(await g.run(src), 'SYNTAX_ERROR');
      },
    );

    g.program(
      'the result may come after tools and timers',
      {
        javascript:
          'const a = await tools.sleep({ ms: 5 });\nawait new Promise((r) => setTimeout(r, 5));\nreturn { a };',
        python: "import asyncio\n\na = tools.sleep(ms=5)\nawait asyncio.sleep(0.005)\n{'a': a}",
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src, { tools: [sleepTool()] }))).toEqual({ a: 5 });
      },
    );
  });
}
