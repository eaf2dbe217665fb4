import { expect } from 'vitest';
import { sleepTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectFailed, expectNoHostPaths, expectSucceeded } from './harness.ts';

/** Results & serialization: what a program returns, how it fails, and TypeScript. */
export function registerResultCases(options: SuiteOptions): void {
  defineGroup(options, 'results & serialization', (g) => {
    g.program(
      'returns JSON values',
      { javascript: "return { a: 1, b: 'x', c: [true, null, 1.5], d: { e: -2 } };" },
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
      { javascript: 'const v = await Promise.resolve(41);\nreturn v + 1;' },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toBe(42);
      },
    );

    g.program('a program without return yields undefined', { javascript: 'const x = 1;' }, async (src) => {
      const result = await g.run(src);
      expect(expectSucceeded(result)).toBeUndefined();
      expect(result.status === 'succeeded' && 'value' in result).toBe(true);
    });

    g.program(
      'a returned promise is awaited',
      { javascript: 'return new Promise((resolve) => setTimeout(() => resolve(5), 10));' },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toBe(5);
      },
    );

    g.program(
      'undefined survives',
      { javascript: 'return { a: undefined, b: [1, undefined, 3] };' },
      async (src) => {
        const value = expectSucceeded(await g.run(src)) as { a?: unknown; b: unknown[] };
        expect(Object.hasOwn(value, 'a')).toBe(true);
        expect(value.a).toBeUndefined();
        expect(value.b).toHaveLength(3);
        expect(value.b[1]).toBeUndefined();
      },
    );

    g.program(
      'strings round-trip exactly (astral, NUL, lone surrogate, as keys too)',
      { javascript: String.raw`const s = '\u{1F600} \0 \uD800 \\ "q" \n';` + '\nreturn { s, [s]: 1 };' },
      async (src) => {
        const s = '\u{1F600} \0 \uD800 \\ "q" \n';
        expect(expectSucceeded(await g.run(src))).toEqual({ s, [s]: 1 });
      },
    );

    g.program(
      'a Date comes back as a host Date',
      { javascript: "return new Date('2020-01-02T03:04:05.678Z');" },
      async (src) => {
        const value = expectSucceeded(await g.run(src));
        expect(value).toBeInstanceOf(Date);
        expect((value as Date).toISOString()).toBe('2020-01-02T03:04:05.678Z');
      },
    );

    g.program(
      'Map and Set survive',
      { javascript: "return { m: new Map([['a', 1], [2, { b: 3 }]]), s: new Set([1, 'two']) };" },
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

    g.program('BigInt survives', { javascript: 'return { big: 2n ** 70n, small: -5n };' }, async (src) => {
      expect(expectSucceeded(await g.run(src))).toEqual({ big: 1180591620717411303424n, small: -5n });
    });

    g.program(
      'NaN and Infinity survive',
      { javascript: 'return [NaN, Infinity, -Infinity];' },
      async (src) => {
        const value = expectSucceeded(await g.run(src)) as number[];
        expect(Number.isNaN(value[0])).toBe(true);
        expect(value.slice(1)).toEqual([Infinity, -Infinity]);
      },
    );

    g.program(
      'shared (acyclic) references are not cycles',
      { javascript: 'const x = { a: 1 };\nreturn [x, x];' },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toEqual([{ a: 1 }, { a: 1 }]);
      },
    );

    g.program(
      'a function in the result is RESULT_INVALID naming the path',
      { javascript: 'return { a: [1, { f() { return 1; } }] };' },
      async (src) => {
        expect(expectFailed(await g.run(src), 'RESULT_INVALID').message).toContain('result.a[1].f');
      },
    );

    g.program(
      'a symbol in the result is RESULT_INVALID naming the path',
      { javascript: "return { s: Symbol('x') };" },
      async (src) => {
        expect(expectFailed(await g.run(src), 'RESULT_INVALID').message).toContain('result.s');
      },
    );

    g.program(
      'a toJSON method is honoured, as JSON.stringify does',
      { javascript: "return { a: 1, nested: { b: 2, toJSON() { return 'replaced'; } } };" },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toEqual({ a: 1, nested: 'replaced' });
      },
    );

    g.program(
      'a toJSON that returns a function is RESULT_INVALID naming the path',
      { javascript: 'return { a: 1, nested: { toJSON() { return { f() {} }; } } };' },
      async (src) => {
        expect(expectFailed(await g.run(src), 'RESULT_INVALID').message).toContain('result.nested.f');
      },
    );

    g.program('returning a function is RESULT_INVALID', { javascript: 'return () => 1;' }, async (src) => {
      expectFailed(await g.run(src), 'RESULT_INVALID');
    });

    g.program(
      'a cycle is RESULT_INVALID',
      { javascript: 'const o = { a: [] };\no.a.push(o);\nreturn o;' },
      async (src) => {
        expectFailed(await g.run(src), 'RESULT_INVALID');
      },
    );

    g.programs(
      'a result over limits.resultBytes is RESULT_LIMIT; under it succeeds',
      { javascript: { big: "return 'x'.repeat(5000);", small: "return 'x'.repeat(100);" } },
      async (src) => {
        expectFailed(await g.run(src.big, { limits: { resultBytes: 1000 } }), 'RESULT_LIMIT');
        expect(expectSucceeded(await g.run(src.small, { limits: { resultBytes: 1000 } }))).toBe(
          'x'.repeat(100),
        );
      },
    );

    g.program(
      'an uncaught error is GUEST_ERROR with name and line',
      { javascript: 'const a = 1;\nconst o = null;\nreturn o.x + a;' },
      async (src) => {
        const error = expectFailed(await g.run(src), 'GUEST_ERROR');
        expect(error.name).toBe('TypeError');
        expect(error.line).toBe(3);
        expectNoHostPaths(JSON.stringify(error));
      },
    );

    g.program(
      'a thrown Error subclass keeps its name and message',
      { javascript: "\n\nthrow new RangeError('out of range');" },
      async (src) => {
        const error = expectFailed(await g.run(src), 'GUEST_ERROR');
        expect(error.name).toBe('RangeError');
        expect(error.message).toContain('out of range');
        expect(error.line).toBe(3);
      },
    );

    g.program('throwing a non-Error is GUEST_ERROR', { javascript: "throw 'plain string';" }, async (src) => {
      expect(expectFailed(await g.run(src), 'GUEST_ERROR').message).toContain('plain string');
    });

    g.program(
      'a rejected returned promise is GUEST_ERROR',
      { javascript: "return Promise.reject(new SyntaxError('rejected'));" },
      async (src) => {
        const error = expectFailed(await g.run(src), 'GUEST_ERROR');
        expect(error.name).toBe('SyntaxError');
      },
    );

    g.program(
      'a syntax error is SYNTAX_ERROR with a line',
      { javascript: 'const x = 1;\nlet = = 2;\nreturn x;' },
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
      { javascript: { language: 'typescript', code: 'const x: number = 1;\nconst y: = 2;\nreturn x;' } },
      async (src) => {
        expectFailed(await g.run(src), 'SYNTAX_ERROR');
      },
    );

    g.program(
      'the result may come after tools and timers',
      {
        javascript:
          'const a = await tools.sleep({ ms: 5 });\nawait new Promise((r) => setTimeout(r, 5));\nreturn { a };',
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src, { tools: [sleepTool()] }))).toEqual({ a: 5 });
      },
    );
  });
}
