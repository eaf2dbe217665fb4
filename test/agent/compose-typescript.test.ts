// Agent mode's TypeScript blocks through the exec path's TypeScript compiler (issue 19): sucrase drops a
// `namespace` without a word and keeps decorators, so such a block is lowered by the compiler (typeScriptLowering),
// shares its names with later blocks like any other, and its errors are placed on its own lines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeProgram, lineInCurrent } from '../../src/agent/compose-program.ts';
import type { ComposedProgram } from '../../src/agent/compose-program.ts';
import { createQuickJsDriver, typeScriptLowering } from '../../src/sandbox/index.ts';
import type { QuickJsDriver } from '../../src/sandbox/index.ts';
import type { ExecutionResult } from '../../src/spec/index.ts';

describe('composeProgram with the TypeScript compiler', () => {
  let driver: QuickJsDriver;
  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 1 });
    await driver.ready();
  });
  afterAll(() => driver.close());

  async function run(blocks: string[]): Promise<{ program: ComposedProgram; result: ExecutionResult }> {
    const program = composeProgram({
      earlier: blocks.slice(0, -1),
      current: blocks.at(-1) ?? '',
      language: 'typescript',
      lowering: typeScriptLowering,
    });
    const result = await driver.execute({
      code: program.code,
      language: 'javascript',
      tools: [],
      host: {
        call: () => Promise.resolve({ ok: true, value: null }),
      },
    });
    return { program, result };
  }
  async function value(blocks: string[]): Promise<unknown> {
    const { result } = await run(blocks);
    if (result.status !== 'succeeded') throw new Error(`failed: ${JSON.stringify(result.error)}`);
    return (result.value as { value: unknown }).value;
  }

  it('a namespace is kept, in its block and in later ones', async () => {
    const ns =
      'namespace Geo {\n  export const R: number = 6371;\n  export function km(rad: number): number { return rad * R; }\n}';
    expect(await value([`${ns}\nGeo.km(2)`])).toBe(12742);
    expect(await value([ns, 'const k: number = Geo.km(1);\nk + Geo.R'])).toBe(12742);
    // Without the compiler sucrase dropped it: the later block's Geo was a ReferenceError.
    const stripped = composeProgram({ earlier: [ns], current: 'Geo.R', language: 'typescript' });
    const r = await driver.execute({
      code: stripped.code,
      language: 'javascript',
      tools: [],
      host: {
        call: () => Promise.resolve({ ok: true, value: null }),
      },
    });
    expect(r.status === 'failed' && r.error.name).toBe('ReferenceError');
  });

  it('decorators are lowered (their helpers move into the block)', async () => {
    const block = [
      'function twice(m: any, _c: any) { return function (this: any, ...a: any[]) { return 2 * m.apply(this, a); }; }',
      'class K { @twice n(): number { return 21; } }',
      'new K().n()',
    ].join('\n');
    expect(await value([block])).toBe(42);
    expect(await value([block, 'new K().n() + 1'])).toBe(43);
  });

  it("an error after a namespace is placed on the block's own line", async () => {
    const { program, result } = await run([
      'const a = 1;',
      'namespace N {\n  export const x = 1;\n}\nconst y: number = N.x;\nnull!.boom;\nreturn y;',
    ]);
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(lineInCurrent(program, result.error.line)).toBe(5);
  });

  it("the compiler's syntax error names the block's line", () => {
    expect(() =>
      composeProgram({
        earlier: [],
        current: 'namespace N {\n  export const x = 1;\n}\nconst = 2;',
        language: 'typescript',
        lowering: typeScriptLowering,
      }),
    ).toThrow(expect.objectContaining({ code: 'SYNTAX_ERROR', details: { line: 4 } }) as Error);
  });
});
