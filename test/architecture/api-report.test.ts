// The public API (src/index.ts) is a curated list: docs/api-report.md names every export and its kind, and this
// test fails when they differ. After a deliberate change: UPDATE_API_REPORT=1 npx vitest run test/architecture.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const REPORT = `${root}docs/api-report.md`;

function kindOf(symbol: ts.Symbol, checker: ts.TypeChecker): string {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const f = target.flags;
  if (f & ts.SymbolFlags.Class) return 'class';
  if (f & ts.SymbolFlags.Function) return 'function';
  if (f & ts.SymbolFlags.Variable) return 'const';
  if (f & ts.SymbolFlags.Interface) return 'interface';
  if (f & ts.SymbolFlags.TypeAlias) return 'type';
  if (f & ts.SymbolFlags.Enum) return 'enum';
  return 'other';
}

const VALUE_KINDS = new Set(['class', 'function', 'const', 'enum']);

/**
 * `name: kind` of every export of an entry point, sorted; a value exported as a type only (`export type *`)
 * is `type-only <kind>`: `values` are the names the module really exports at run time.
 */
function exportsOf(entry: string, values: ReadonlySet<string>): string[] {
  const program = ts.createProgram([entry], {
    allowImportingTsExtensions: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(entry);
  const module = file && checker.getSymbolAtLocation(file);
  if (!module) throw new Error(`no module symbol for ${entry}`);
  return checker
    .getExportsOfModule(module)
    .map((s) => {
      const kind = kindOf(s, checker);
      const typeOnly = VALUE_KINDS.has(kind) && !values.has(s.getName());
      return `${s.getName()}: ${typeOnly ? `type-only ${kind}` : kind}`;
    })
    .sort();
}

function report(lines: readonly string[]): string {
  return [
    '# The public API of codecall',
    '',
    'Every export of `codecall` (src/index.ts) and its kind, checked by test/architecture/api-report.test.ts.',
    'What is not here is internal: `codecall/internal` (src/internal.ts) has it, without any promise of stability.',
    '',
    '```',
    ...lines,
    '```',
    '',
  ].join('\n');
}

describe('the public API', async () => {
  const values = new Set(Object.keys(await import('../../src/index.ts')));
  const exported = exportsOf(`${root}src/index.ts`, values);

  it('is the one docs/api-report.md lists', () => {
    if (process.env.UPDATE_API_REPORT === '1') writeFileSync(REPORT, report(exported));
    expect(readFileSync(REPORT, 'utf8')).toBe(report(exported));
  });

  it('holds what a user builds on and none of the internals', () => {
    const names = new Set(exported.filter((l) => !l.includes('type-only')).map((l) => l.split(':')[0]));
    for (const name of [
      'createRuntime',
      'defineTool',
      'createQuickJsDriver',
      'createSqliteTaskStore',
      'Runtime',
    ])
      expect(names).toContain(name);
    for (const name of ['JournalingHost', 'runJournaled', 'settleRun', 'MIGRATIONS', 'TaskRunner'])
      expect(names).not.toContain(name);
  });

  it('codecall/internal still reaches the internals', async () => {
    const internal = await import('../../src/internal.ts');
    expect(typeof internal.JournalingHost).toBe('function');
    expect(typeof internal.TaskRunner).toBe('function');
  });
});
