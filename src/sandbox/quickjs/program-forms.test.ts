import { describe, expect, it } from 'vitest';
import { fencedAsTypeScript, unfence } from '../fenced-program.ts';
import { CLOSE, OPEN, applyEdits, programForms } from './program-forms.ts';
import { alignColumn, programPosition } from './source-position.ts';
import { prepareProgram } from './transpile.ts';

const wrap = (code: string): string => OPEN + code + CLOSE;

/** The program as it is rewritten (the wrapper left out), or null when acorn could not parse it. */
function rewritten(code: string): string | null {
  const forms = programForms(wrap(code));
  return forms.kind === 'program' ? forms.code.slice(OPEN.length, -CLOSE.length + 1) : null;
}

describe('program forms (on the parsed program)', () => {
  it('makes the last expression statement the value when there is no top-level return', () => {
    expect(rewritten('const a = 1;\na + 1')).toBe(
      'const a = 1;\n__cc_value = (a + 1); return __cc_value; var __cc_value;\n',
    );
    expect(rewritten('a + 1;')).toBe('__cc_value = (a + 1); return __cc_value; var __cc_value;\n');
    // A trailing line comment stays after the inserted text.
    expect(rewritten('x = 5 // five')).toBe(
      '__cc_value = (x = 5); return __cc_value; var __cc_value; // five\n',
    );
    expect(rewritten('a, b')).toBe('__cc_value = (a, b); return __cc_value; var __cc_value;\n');
  });

  it('keeps the meaning of a top-level return, wherever it is, and of trailing declarations', () => {
    for (const code of [
      'return 1;\n2',
      'if (x) { return 1 }\n2',
      'for (;;) { try { return 1 } finally {} }\n2',
      'switch (x) { case 1: return 1 }\n2',
      'label: { return 1 }\n2',
      'const x = 1;',
      'f()\nfunction g() {}',
      'f();\nclass K {}',
    ]) {
      expect(rewritten(code), code).toBe(`${code}\n`);
    }
    // A return inside a function is not the program's.
    expect(rewritten('function f() { return 1 }\nf()')).toContain('__cc_value = (f())');
  });

  it('calls a program that is a function', () => {
    expect(rewritten('async () => { return 1 }')).toBe(
      '__cc_value = (async () => { return 1 })(); return __cc_value; var __cc_value;\n',
    );
    expect(rewritten('(async function () { return 1 });')).toBe(
      '__cc_value = ((async function () { return 1 }))(); return __cc_value; var __cc_value;\n',
    );
    expect(rewritten('async function main() { return 1 }')).toBe(
      'async function main() { return 1 }\nreturn main();',
    );
    expect(rewritten('"use strict";\nfunction main() { return 1 }')).toContain('return main();');
    // Not alone: a function declared last is a helper, not the program.
    expect(rewritten('f();\nfunction main() {}')).toBe('f();\nfunction main() {}\n');
  });

  it('accepts export default and export before a declaration', () => {
    expect(rewritten('export default async function () { return 1 }')).toBe(
      "__cc_default = async function () { return 1 };\nreturn typeof __cc_default === 'function' ? __cc_default() : __cc_default; var __cc_default;",
    );
    expect(rewritten('const k = 1;\nexport default { k };')).toContain('__cc_default = { k };');
    expect(rewritten('export default async function main() { return 1 }')).toBe(
      "async function main() { return 1 }\nreturn typeof main === 'function' ? main() : main;",
    );
    expect(rewritten('export async function main() { return 1 }')).toBe(
      'async function main() { return 1 }\nreturn main();',
    );
    // An import the sandbox cannot satisfy is reported as such (transpile.ts names the module).
    expect(programForms(wrap('import x from "y";\nexport default x'))).toMatchObject({
      kind: 'import',
      module: 'y',
    });
  });

  it('leaves a program acorn cannot parse, or one that closes the wrapper early, as it is', () => {
    expect(programForms(wrap('let = = 1;'))).toMatchObject({ kind: 'unparsed' });
    expect(rewritten('1 });\n(async () => { 2')).toBe('1 });\n(async () => { 2\n');
    // Nesting deep enough to overflow the parser's stack is not the rewrite's to report.
    expect(programForms(wrap('['.repeat(200_000)))).toMatchObject({ kind: 'unparsed' });
  });

  it('edits only within lines', () => {
    const code = 'const a = 1;\n\nexport default async () => {\n  return a;\n}';
    const forms = programForms(wrap(code));
    if (forms.kind !== 'program') throw new Error('not parsed');
    expect(forms.code.split('\n')).toHaveLength(wrap(code).split('\n').length);
    expect(applyEdits(wrap(code), forms.edits)).toBe(forms.code);
  });
});

describe('imports', () => {
  it('an import is a SyntaxError naming the module and where it is', () => {
    const prepared = prepareProgram('const a = 1;\nimport _ from "lodash";\n_.sum([a])', 'javascript');
    expect(prepared.ok).toBe(false);
    if (prepared.ok) return;
    expect(prepared.error.code).toBe('SYNTAX_ERROR');
    expect(prepared.error.message).toContain("cannot import 'lodash'");
    expect(prepared.error.line).toBe(2);
  });
});

describe('fenced programs', () => {
  it('empties the fence lines of a program that is one fenced block', () => {
    expect(unfence('```js\nconst a = 1;\na\n```')).toBe('\nconst a = 1;\na\n');
    expect(unfence('\n  ```typescript\nconst a: number = 1;\n```\n\n')).toBe(
      '\n\nconst a: number = 1;\n\n\n',
    );
    expect(unfence('~~~\nx\n~~~')).toBe('\nx\n');
    // Each language's own info strings (the module is shared with the python driver).
    expect(unfence('```python\nx = 1\n```', 'python')).toBe('\nx = 1\n');
    expect(unfence('```python\nx = 1\n```')).toBe('```python\nx = 1\n```');
    expect(unfence('```js\n1\n```', 'python')).toBe('```js\n1\n```');
    // A reply cut off before its closing fence.
    expect(unfence('```js\nasync () => 1\n')).toBe('\nasync () => 1\n');
    expect(fencedAsTypeScript('```ts\nconst a: number = 1;\n```')).toBe(true);
    expect(fencedAsTypeScript('```javascript\nconst a = 1;\n```')).toBe(false);
  });

  it('leaves anything else alone', () => {
    for (const code of [
      'Here it is:\n```js\nx\n```',
      '```js\nx\n```\nmore text',
      '```js\na\n```\n```js\nb\n```',
      '```python\nx\n```',
      'const s = `\n```\n`;',
    ]) {
      expect(unfence(code), code).toBe(code);
    }
  });
});

describe('positions in the program as written', () => {
  it('maps a position of the rewritten JavaScript back, line 1 without the wrapper', () => {
    const code = 'const a = 1;\n  a + null.x';
    const prepared = prepareProgram(code, 'javascript');
    if (!prepared.ok) throw new Error('not prepared');
    // QuickJS reports the statement's start: inside the inserted `__cc_value = (`.
    const line2 = prepared.code.split('\n')[1] ?? '';
    expect(programPosition({ line: 2, column: 3 }, prepared.code, prepared.source, code)).toEqual({
      line: 2,
      column: 3,
    });
    const at = line2.indexOf('null') + 1;
    expect(programPosition({ line: 2, column: at }, prepared.code, prepared.source, code)).toEqual({
      line: 2,
      column: 7,
    });
    expect(
      programPosition({ line: 1, column: OPEN.length + 7 }, prepared.code, prepared.source, code),
    ).toEqual({
      line: 1,
      column: 7,
    });
  });

  it('maps a column of sucrase output to the TypeScript it came from', () => {
    expect(alignColumn('const b = null ;  b.length', 'const b: string = null as any;  b.length', 18)).toBe(
      32,
    );
    const code = 'const a: number = 1;\nconst b: string = null as any;  b.length';
    const prepared = prepareProgram(code, 'typescript');
    if (!prepared.ok) throw new Error('not prepared');
    const line2 = prepared.code.split('\n')[1] ?? '';
    const at = line2.indexOf('b.length') + 1;
    expect(programPosition({ line: 2, column: at }, prepared.code, prepared.source, code)).toEqual({
      line: 2,
      column: 33,
    });
  });

  it("maps a position of the TypeScript compiler's output through its source map", () => {
    const code = 'namespace A { export const x = 1; }\nconst y: number = 2;\n  null.zz';
    const prepared = prepareProgram(code, 'typescript');
    if (!prepared.ok) throw new Error('not prepared');
    expect(typeof prepared.source?.stripped).toBe('object');
    const lines = prepared.code.split('\n');
    const line = lines.findIndex((l) => l.includes('null.zz')) + 1;
    const column = (lines[line - 1] ?? '').indexOf('null.zz') + 1;
    expect(programPosition({ line, column }, prepared.code, prepared.source, code)).toEqual({
      line: 3,
      column: 3,
    });
  });
});
