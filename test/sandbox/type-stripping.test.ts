import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJsDriver, runProgram } from '../../src/internal.ts';
import type { ExecutionResult, QuickJsDriver } from '../../src/internal.ts';

/**
 * Programs on which sucrase backtracks exponentially: each repeat doubles the work (18 repeats take seconds, 40
 * take months). Issue 15 class 9: stripping them must neither stall a sandbox worker nor outlive its time.
 */
const CRAFTED: readonly [string, string][] = [
  ['<T>( repeated', `const x = ${'<T>('.repeat(40)}`],
  ['(<T>( repeated', `const x = ${'(<T>('.repeat(40)}`],
  ['a ? (<T>( repeated', `const x = ${'a ? (<T>('.repeat(40)}`],
  ['(<T>(a repeated inside a function', `function f() {\n  return ${'(<T>(a'.repeat(40)}\n}`],
];

function failedWith(result: ExecutionResult): string | undefined {
  return result.status === 'failed' ? result.error.code : undefined;
}

describe('TypeScript type stripping is bounded', () => {
  let driver: QuickJsDriver;
  beforeAll(async () => {
    // One sandbox worker: a transform stuck on it would stall every neighbour below.
    driver = createQuickJsDriver({ workers: 1, typeStripTimeoutMs: 1_500 });
    await driver.ready();
  });
  afterAll(() => driver.close());

  it.each(CRAFTED)(
    'a crafted program (%s) fails with SOURCE_TOO_COMPLEX while a JavaScript neighbour runs',
    async (_name, code) => {
      const [crafted, neighbour] = await Promise.all([
        runProgram({ driver, code, language: 'typescript', limits: { timeoutMs: 20_000 } }),
        runProgram({ driver, code: 'await new Promise((r) => setTimeout(r, 100)); return "ok";' }),
      ]);
      expect(failedWith(crafted)).toBe('SOURCE_TOO_COMPLEX');
      expect(neighbour).toMatchObject({ status: 'succeeded', value: 'ok' });
      // The stripping thread was replaced: TypeScript runs again.
      const after = await runProgram({
        driver,
        code: 'const n: number = 2;\nreturn n',
        language: 'typescript',
      });
      expect(after).toMatchObject({ status: 'succeeded', value: 2 });
    },
    30_000,
  );

  it('the same crafted program again fails the same way (from the cache), and so do many at once', async () => {
    const code = CRAFTED[0]![1];
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => runProgram({ driver, code, language: 'typescript' })),
    );
    expect(runs.map(failedWith)).toEqual(Array(4).fill('SOURCE_TOO_COMPLEX'));
  }, 30_000);

  it('an execution timeout shorter than the strip limit is TIMEOUT', async () => {
    const code = `const y = ${'<T>('.repeat(41)}`;
    const result = await runProgram({ driver, code, language: 'typescript', limits: { timeoutMs: 300 } });
    expect(failedWith(result)).toBe('TIMEOUT');
  }, 30_000);

  it('keeps ordinary TypeScript and its syntax errors as they were', async () => {
    const ok = await runProgram({
      driver,
      code: 'interface P { x: number }\nconst p: P = { x: 3 };\nreturn p.x as number;',
      language: 'typescript',
    });
    expect(ok).toMatchObject({ status: 'succeeded', value: 3 });
    const bad = await runProgram({
      driver,
      code: 'const a = 1;\nconst b: number = ;',
      language: 'typescript',
    });
    expect(bad).toMatchObject({
      status: 'failed',
      error: { code: 'SYNTAX_ERROR', name: 'SyntaxError', line: 2 },
    });
  });

  it('an abort while the program waits to be stripped ends it with the abort', async () => {
    const controller = new AbortController();
    const slow = runProgram({ driver, code: `const z = ${'<T>('.repeat(42)}`, language: 'typescript' });
    const waiting = runProgram({
      driver,
      code: 'const w: number = 1;\nreturn w',
      language: 'typescript',
      signal: controller.signal,
    });
    controller.abort();
    expect(failedWith(await waiting)).toBe('INTERRUPTED');
    expect(failedWith(await slow)).toBe('SOURCE_TOO_COMPLEX');
  }, 30_000);
});

describe('the TypeScript compiler (namespaces, decorators) is loaded when a program needs it', () => {
  it("does not count the compiler's load against the program's time, and a crafted program stays bounded", async () => {
    // A fresh driver: its stripping thread has no compiler yet. Loading it takes longer than this strip limit.
    const driver = createQuickJsDriver({ workers: 1, typeStripTimeoutMs: 300 });
    try {
      await driver.ready();
      const code = 'namespace N { export const n: number = 2; }\nN.n';
      const first = await runProgram({ driver, code, language: 'typescript', limits: { timeoutMs: 2_000 } });
      expect(first).toMatchObject({ status: 'succeeded', value: 2 });
      // Loaded: a crafted program still fails on sucrase's limit (sucrase runs first), at once.
      const started = performance.now();
      const crafted = await runProgram({
        driver,
        code: `namespace M {}\nconst x = ${'<T>('.repeat(40)}`,
        language: 'typescript',
      });
      expect(failedWith(crafted)).toBe('SOURCE_TOO_COMPLEX');
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      await driver.close();
    }
  }, 60_000);
});
