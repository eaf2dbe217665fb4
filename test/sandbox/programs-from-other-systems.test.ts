import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJsDriver, defineTool, runProgram } from '../../src/internal.ts';
import type { ExecutionResult, GuestLanguage, QuickJsDriver, ToolDefinition } from '../../src/internal.ts';
import { boomTool, echoTool, newToolLog } from '../conformance/fixtures.ts';

/**
 * Issue 19, JavaScript and TypeScript: programs written for other code-mode systems (Cloudflare's Code Mode,
 * Vercel's code-mode) or as models write them. The language-neutral cases are in the conformance suite
 * (conformance-results.ts, conformance-tools.ts, conformance-replay.ts).
 */
describe('programs written for other systems (quickjs)', () => {
  let driver: QuickJsDriver;
  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 2 });
    await driver.ready();
  });
  afterAll(() => driver.close());

  const run = (
    code: string,
    language: GuestLanguage = 'javascript',
    tools: ToolDefinition[] = [echoTool()],
  ): Promise<ExecutionResult> => runProgram({ driver, code, language, tools });

  const value = async (code: string, language: GuestLanguage = 'javascript'): Promise<unknown> => {
    const result = await run(code, language);
    if (result.status !== 'succeeded') throw new Error(`failed: ${JSON.stringify(result.error)}`);
    return result.value;
  };

  const failure = async (code: string, language: GuestLanguage = 'javascript') => {
    const result = await run(code, language);
    if (result.status !== 'failed') throw new Error(`succeeded: ${JSON.stringify(result.value)}`);
    return result.error;
  };

  describe('completion value', () => {
    it('is the value of the last expression statement when the program does not return', async () => {
      expect(await value('const a = 40;\na + 2')).toBe(42);
      expect(await value("const r = await tools.echo({ city: 'Paris' });\nr.city")).toBe('Paris');
      expect(await value('const a: number = 40;\na + 2;', 'typescript')).toBe(42);
      // A promise is awaited, as a returned one is.
      expect(await value('Promise.resolve(7)')).toBe(7);
      expect(await value("'hello'")).toBe('hello');
    });

    it('leaves a top-level return, anywhere, and trailing declarations their meaning', async () => {
      expect(await value('if (true) { return 1 }\n2')).toBe(1);
      expect(await value('for (const x of [5]) { return x }\n2')).toBe(5);
      expect(await value('const a = 1;')).toBeUndefined();
      expect(await value('f();\nfunction f() { return 3 }')).toBeUndefined();
    });

    it('that is a function is RESULT_INVALID naming it', async () => {
      const error = await failure('const helper = () => 1;\nhelper');
      expect(error.code).toBe('RESULT_INVALID');
      expect(error.message).toContain('result');
      expect((await failure('const o = { items: [1, 2, { fn() {} }] };\no')).message).toContain(
        'result.items[2].fn',
      );
    });

    it('is the same on every run of the same program (seeded, replayable)', async () => {
      const code = 'const r = await tools.echo({ n: Math.random() });\n[r.n, Date.now() > 0]';
      const a = await runProgram({ driver, code, tools: [echoTool()], seed: 11 });
      const b = await runProgram({ driver, code, tools: [echoTool()], seed: 11 });
      expect(a.status).toBe('succeeded');
      expect(a.status === 'succeeded' && a.value).toEqual(b.status === 'succeeded' && b.value);
    });
  });

  describe('programs that are a function, a module or a fenced block', () => {
    it('calls a program that is an async arrow or function, with the tools as globals', async () => {
      const code = "async () => {\n  const r = await tools.echo({ city: 'Oslo' });\n  return r.city;\n}";
      expect(await value(code)).toBe('Oslo');
      expect(await value('(async function () { return 2; })')).toBe(2);
      expect(await value('async function main() {\n  return 3;\n}')).toBe(3);
      expect(await value('async () => 4', 'typescript')).toBe(4);
    });

    it("gives Code Mode's codemode global the program's tools, unless a namespace takes the name", async () => {
      const code = "async () => {\n  const r = await codemode.echo({ city: 'Lima' });\n  return r.city;\n}";
      expect(await value(code)).toBe('Lima');
      const own = defineTool({ name: 'ping', namespace: 'codemode', description: '', execute: () => 'own' });
      const result = await run('await codemode.ping({})', 'javascript', [echoTool(), own]);
      expect(result).toMatchObject({ status: 'succeeded', value: 'own' });
    });

    it('runs export default (a function is called) and export before a declaration', async () => {
      expect(await value('export default async function () {\n  return 5;\n}')).toBe(5);
      expect(await value('export default async () => 6')).toBe(6);
      expect(await value('const k = 7;\nexport default { k };')).toEqual({ k: 7 });
      expect(await value('export default async function main() { return 8 }')).toBe(8);
      expect(await value('export async function main() { return 9 }')).toBe(9);
      expect(await value('export default async (): Promise<number> => 10', 'typescript')).toBe(10);
      // A return in the program still decides.
      expect(await value('export default () => 1;\nreturn 11;')).toBe(11);
      expect((await failure('import fs from "fs";\nexport default 1')).code).toBe('SYNTAX_ERROR');
    });

    it('runs a program that is one fenced block without its fences, keeping its lines', async () => {
      expect(await value('```js\nconst a = 12;\na\n```')).toBe(12);
      expect(await value('\n```javascript\nasync () => 13\n```\n')).toBe(13);
      expect(await value('```typescript\nconst a: number = 14;\nreturn a;\n```', 'typescript')).toBe(14);
      // A block fenced as TypeScript is TypeScript, whatever the request says.
      expect(await value('```ts\nconst a: number = 15;\na\n```')).toBe(15);
      const error = await failure('```js\nconst a = 1;\nnull.x;\n```');
      expect(error).toMatchObject({ code: 'GUEST_ERROR', line: 3 });
      // Text around the block is not stripped: the program is taken as written (and fails).
      expect((await run('Here is the code:\n```js\n1\n```')).status).toBe('failed');
    });
  });

  describe('errors carry their type, line and column in the program as written', () => {
    it('JavaScript: a thrown error, a TypeError in the completion value, a SyntaxError', async () => {
      expect(await failure("const a = 1;\n  throw new RangeError('far');")).toMatchObject({
        name: 'RangeError',
        line: 2,
        column: 13, // QuickJS places an error where it was constructed
      });
      expect(await failure('const a = 1;\n  null.x')).toMatchObject({
        name: 'TypeError',
        line: 2,
        column: 3,
      });
      expect(await failure("throw new Error('first line')")).toMatchObject({ line: 1, column: 11 });
      expect(await failure('const a = 1;\nlet = = 2;')).toMatchObject({
        code: 'SYNTAX_ERROR',
        name: 'SyntaxError',
        line: 2,
        column: 7,
      });
    });

    it('an uncaught tool error is placed at the call that made it', async () => {
      const boom = boomTool();
      const code = 'const a = 1;\nconst ok = await tools.echo({});\n  const r = await tools.boom({});\nr';
      const result = await run(code, 'javascript', [echoTool(), boom]);
      expect(result.status === 'failed' && result.error).toMatchObject({
        code: 'E_BOOM',
        name: 'ToolError',
        line: 3,
        column: 25, // the call's property name
      });
      const unknown = await run('\n  await tools.nope({})');
      expect(unknown.status === 'failed' && unknown.error).toMatchObject({ code: 'NO_SUCH_TOOL', line: 2 });
    });

    it('TypeScript: columns before the types were stripped, SyntaxErrors from the stripper', async () => {
      expect(
        await failure('const a: number = 1;\nconst b: string = null as any;  b.length', 'typescript'),
      ).toMatchObject({ name: 'TypeError', line: 2, column: 33 });
      expect(await failure('const a = 1;\nconst b: number = ;', 'typescript')).toMatchObject({
        code: 'SYNTAX_ERROR',
        line: 2,
        column: 19,
      });
    });

    it("TypeScript through the compiler (a namespace): through the compiler's source map", async () => {
      const code = 'namespace A { export const x = 1; }\nconst y: number = A.x;\n  null.zz';
      expect(await failure(code, 'typescript')).toMatchObject({ name: 'TypeError', line: 3, column: 3 });
    });
  });

  describe('TypeScript namespaces and decorators', () => {
    it('runs a namespace (which type stripping would drop)', async () => {
      const code = [
        'namespace Geometry {',
        '  export const unit = 2;',
        '  export function area(side: number): number { return side * side * unit; }',
        '  export namespace Inner { export const deep = 3; }',
        '}',
        'Geometry.area(3) + Geometry.Inner.deep',
      ].join('\n');
      expect(await value(code, 'typescript')).toBe(21);
      // `declare namespace` is types only, as before.
      expect(await value('declare namespace Env { const x: number }\nreturn 1;', 'typescript')).toBe(1);
    });

    it('runs TC39 decorators: class, method, field and accessor', async () => {
      const code = [
        'const seen: string[] = [];',
        'function tag(value: any, context: ClassDecoratorContext) { seen.push(`class ${String(context.name)}`); }',
        'function twice(value: (this: any, x: number) => number, context: ClassMethodDecoratorContext) {',
        '  seen.push(`method ${String(context.name)}`);',
        '  return function (this: any, x: number) { return value.call(this, x) * 2; };',
        '}',
        'function plusOne(_: undefined, context: ClassFieldDecoratorContext) {',
        '  return (initial: number) => initial + 1;',
        '}',
        'function logged(target: any, context: ClassAccessorDecoratorContext) {',
        '  return { get(this: any) { seen.push(`get ${String(context.name)}`); return target.get.call(this); } };',
        '}',
        '@tag class Counter {',
        '  @plusOne start = 10;',
        '  @logged accessor label = "c";',
        '  @twice add(x: number): number { return this.start + x; }',
        '}',
        'const c = new Counter();',
        'return { sum: c.add(1), label: c.label, seen };',
      ].join('\n');
      expect(await value(code, 'typescript')).toEqual({
        sum: 24,
        label: 'c',
        seen: ['method add', 'class Counter', 'get label'],
      });
    });

    it('keeps a program with decorators replayable: the same result on every run', async () => {
      const code = '@((c: any) => c) class K { x = Math.random() }\nnew K().x';
      const a = await runProgram({ driver, code, language: 'typescript', seed: 3 });
      const b = await runProgram({ driver, code, language: 'typescript', seed: 3 });
      expect(a.status).toBe('succeeded');
      expect(a.status === 'succeeded' && a.value).toBe(b.status === 'succeeded' && b.value);
    });
  });

  it('hands a tool its arguments as JSON would (no undefined property, null for NaN)', async () => {
    const log = newToolLog();
    const result = await run(
      'await tools.echo({ a: undefined, n: NaN, list: [undefined, -0] })',
      'javascript',
      [echoTool(log)],
    );
    expect(result.status).toBe('succeeded');
    expect(log.args).toEqual([{ n: null, list: [null, 0] }]);
    expect(Object.hasOwn(log.args[0] as object, 'a')).toBe(false);
  });
});
