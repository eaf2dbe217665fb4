import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeProgram, lineInCurrent } from '../../src/agent/compose-program.ts';
import type { ComposedProgram } from '../../src/agent/compose-program.ts';
import { createQuickJsDriver } from '../../src/sandbox/quickjs/index.ts';
import type { QuickJsDriver } from '../../src/sandbox/quickjs/index.ts';
import type { ExecutionResult, HostCall, HostOutcome } from '../../src/spec/index.ts';

// The composed programs run through the real quickjs driver: the tests check behaviour, not text.
describe('composeProgram', () => {
  let driver: QuickJsDriver;
  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 1 });
    await driver.ready();
  });
  afterAll(() => driver.close());

  const calls: HostCall[] = [];
  const host = {
    call(call: HostCall): Promise<HostOutcome> {
      calls.push(call);
      const { a, b } = (call.kind === 'tool' ? call.args : {}) as { a: number; b: number };
      return Promise.resolve({ ok: true, value: a + b });
    },
  };

  /** Runs the last block with the others as earlier blocks. */
  async function run(
    blocks: string[],
    language: 'javascript' | 'typescript' = 'javascript',
  ): Promise<{ program: ComposedProgram; result: ExecutionResult }> {
    const program = composeProgram({ earlier: blocks.slice(0, -1), current: blocks.at(-1) ?? '', language });
    const result = await driver.execute({
      code: program.code,
      language: 'javascript',
      tools: [{ namespace: 'tools', name: 'add' }],
      host,
    });
    return { program, result };
  }

  /** The value of the composed program, failing the test when it did not succeed. */
  async function value(blocks: string[], language?: 'javascript' | 'typescript'): Promise<unknown> {
    const { result } = await run(blocks, language);
    if (result.status !== 'succeeded') throw new Error(`failed: ${JSON.stringify(result.error)}`);
    return result.value;
  }
  const notFinal = (v: unknown) => ({ final: false, value: v });

  it('shares a top-level variable with later blocks', async () => {
    expect(await value(['const data = [1, 2, 3];', 'return data.map((n) => n * 2);'])).toEqual(
      notFinal([2, 4, 6]),
    );
  });

  it('lets a later block redeclare a name', async () => {
    expect(await value(['const x = 1;', 'const x = 2;', 'const y = x + 1\nreturn [x, y]'])).toEqual(
      notFinal([2, 3]),
    );
  });

  it('shares names bound by destructuring patterns', async () => {
    const block1 = [
      'const o = { a: 1, b: [2, 3, 4], c: { d: 5 } };',
      'const { a, b: [first, ...others], c: { d }, e = 6, ...rest } = o, [p, [q = 7] = []] = [8];',
      'let x',
    ].join('\n');
    expect(await value([block1, 'return [a, first, others, d, e, Object.keys(rest), p, q, x]'])).toEqual(
      notFinal([1, 2, [3, 4], 5, 6, [], 8, 7, undefined]),
    );
  });

  it('resets `let x;` to undefined, but `var x;` keeps the value as a redeclared var does', async () => {
    expect(await value(['let x = 1;', 'let x\nreturn typeof x'])).toEqual(notFinal('undefined'));
    expect(await value(['var x = 1;', 'var x, y = 2\nreturn [x, y]'])).toEqual(notFinal([1, 2]));
  });

  it('hoists functions within their block and shares them with later blocks', async () => {
    const block1 = [
      'const early = double(4);',
      'function double(n) { return n * 2 }',
      'function fact(n) { return n <= 1 ? 1 : n * fact(n - 1) }',
      'async function later(n) { return (await tools.add({ a: n, b: 1 })) }',
      'function* count() { yield 1; yield 2 }',
    ].join('\n');
    expect(
      await value([block1, 'return [early, double(5), fact(5), await later(2), [...count()], fact.name]']),
    ).toEqual(notFinal([8, 10, 120, 3, [1, 2], 'fact']));
    // A later block replaces a function; one after a directive is still hoisted.
    const block2 = "'use strict'\nconst before = double(1)\nfunction double(n) { return n * 3 }";
    expect(await value([block1, block2, '[before, double(2), early]'])).toEqual(notFinal([3, 6, 8]));
  });

  it('shares classes and their instances', async () => {
    const block1 = 'class Counter { n = 0; inc() { return ++this.n } }\nconst c = new Counter();\nc.inc()';
    expect(
      await value([
        block1,
        'c.inc();\nreturn [c.inc(), c instanceof Counter, new Counter().inc(), Counter.name]',
      ]),
    ).toEqual(notFinal([3, true, 1, 'Counter']));
  });

  it('keeps closures over earlier variables live', async () => {
    const block1 = 'let count = 10;\nconst bump = () => ++count;';
    expect(await value([block1, 'bump()', 'bump();\ncount'])).toEqual(notFinal(12));
  });

  it('takes a trailing expression as the value, else the return', async () => {
    expect(await value(['const x = 20', 'x * 2 + 2'])).toEqual(notFinal(42));
    expect(await value(['if (true) return "early"; 1'])).toEqual(notFinal('early'));
    expect(await value(['const x = 1'])).toEqual(notFinal(undefined));
    expect(await value(['await tools.add({ a: 40, b: 2 })'])).toEqual(notFinal(42));
  });

  it('ends the block with final_answer, even when the guest catches it', async () => {
    expect(await value(['final_answer(42);\nthrow new Error("not reached")'])).toEqual({
      final: true,
      value: 42,
    });
    const caught = 'try { final_answer({ ok: 1 }) } catch (e) { console.log("caught") }\nreturn 2';
    expect(await value([caught])).toEqual({ final: true, value: { ok: 1 } });
  });

  it('reports final only when current called final_answer', async () => {
    expect(await value(['const x = 1;\nfinal_answer(x)\nx = 5', 'x + 1'])).toEqual(notFinal(2));
  });

  it('silences the earlier blocks but not the current one', async () => {
    const { result } = await run([
      'console.log("old");\nconsole.warn("old warn")\nconst x = 1',
      'console.log("new", x)\nconsole.error("bad")',
    ]);
    expect(result.logs.map((l) => [l.level, l.message])).toEqual([
      ['log', 'new 1'],
      ['error', 'bad'],
    ]);
  });

  it('strips TypeScript types, keeping lines', async () => {
    const block1 = [
      'interface Point {',
      '  x: number;',
      '  y: number;',
      '}',
      'type Pair = [number, number];',
      'const p: Point = { x: 1, y: 2 };',
      'function sum(pair: Pair): number { return pair[0] + pair[1] }',
      'enum Color { Red, Green }',
    ].join('\n');
    expect(
      await value([block1, 'const s: number = sum([p.x, p.y]) as number;\n[s, Color.Green]'], 'typescript'),
    ).toEqual(notFinal([3, 1]));
    const { program, result } = await run(
      [block1, 'const n: number = 1;\n\nthrow new Error("boom")'],
      'typescript',
    );
    expect(result.status === 'failed' && lineInCurrent(program, result.error.line)).toBe(3);
  });

  it('reports a runtime error at its line in current', async () => {
    const { program, result } = await run([
      'const x = 1\n\nconst y = 2',
      'const z = x;\n\nnull.boom;\nreturn z',
    ]);
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error.code).toBe('GUEST_ERROR');
    expect(result.error.line).toBe(program.currentFirstLine + 2);
    expect(lineInCurrent(program, result.error.line)).toBe(3);
    expect(lineInCurrent(program, 1)).toBeUndefined();
    expect(lineInCurrent(program, undefined)).toBeUndefined();
    expect(lineInCurrent(program, program.currentFirstLine + program.currentLines)).toBeUndefined();
  });

  it('throws SYNTAX_ERROR with the line in current', () => {
    const compose =
      (current: string, language: 'javascript' | 'typescript' = 'javascript') =>
      () =>
        composeProgram({ earlier: ['const a = 1'], current, language });
    const syntaxError = (line: number) =>
      expect.objectContaining({ code: 'SYNTAX_ERROR', details: { line } }) as Error;
    expect(compose('const x = 1;\nconst y = ;')).toThrow(syntaxError(2));
    expect(compose('const x: number = 1;\n\nlet = = 2', 'typescript')).toThrow(syntaxError(3));
    expect(compose('return 1\n})\n(async () => {')).toThrow(
      expect.objectContaining({ code: 'SYNTAX_ERROR' }),
    );
    expect(compose('const __cc_block = 1')).toThrow(syntaxError(1));
    expect(() => composeProgram({ earlier: ['const = 1'], current: '1', language: 'javascript' })).toThrow(
      expect.objectContaining({ code: 'INTERNAL' }),
    );
  });

  it('leaves nested declarations and strings alone', async () => {
    const block1 = [
      'const s = "const x = 1";',
      'if (true) { const inner = 1; function nested() {} }',
      'for (let i = 0; i < 2; i++) { const loopVar = i }',
      'function outer() { const local = 3; return local }',
    ].join('\n');
    const block2 = 'return [s, typeof inner, typeof nested, typeof i, typeof loopVar, typeof local, outer()]';
    expect(await value([block1, block2])).toEqual(
      notFinal(['const x = 1', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 3]),
    );
    const { code } = composeProgram({ earlier: [], current: block1, language: 'javascript' });
    expect(code).toContain('const s = "const x = 1"'.slice(6));
    expect(code).toContain('{ const inner = 1; function nested() {} }');
    expect(code).toContain(
      'function outer() { const local = 3; return local }'.replace('outer', '__cc_fn_outer'),
    );
  });

  it('guards rewritten declarations against ASI hazards', async () => {
    expect(await value(['let x\n[1, 2].forEach((n) => (x = n))\nclass C {}\n(0, 1)\nx'])).toEqual(
      notFinal(2),
    );
  });

  it('is ordinary code for the driver: tool calls go to the host', async () => {
    calls.length = 0;
    const block1 = 'const three = await tools.add({ a: 1, b: 2 });';
    expect(await value([block1, 'await tools.add({ a: three, b: 4 })'])).toEqual(notFinal(7));
    expect(calls.map((c) => c.kind === 'tool' && [c.name, c.args])).toEqual([
      ['add', { a: 1, b: 2 }],
      ['add', { a: 3, b: 4 }],
    ]);
  });
});
