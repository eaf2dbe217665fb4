import { createRequire } from 'node:module';
import type * as TypeScript from 'typescript';

/**
 * The TypeScript compiler, for the programs sucrase cannot strip: those with a `namespace` (sucrase drops it
 * without a word) or decorators (sucrase keeps them, and QuickJS has none). Loaded on first use only (~0.5 s,
 * ~25 MiB of the type-stripping thread's heap): every other program is stripped by sucrase as before.
 */
let compiler: typeof TypeScript | undefined;

function load(told: ((loading: 'start' | 'done') => void) | undefined): typeof TypeScript {
  if (compiler) return compiler;
  told?.('start');
  const ts = createRequire(import.meta.url)('typescript') as typeof TypeScript;
  // Part of the load: the first compile is several times slower than the next (the compiler's own code warms up).
  ts.transpileModule('namespace N { export const n = 1; }\n@d class K { @d m() {} }', options(ts));
  compiler = ts;
  told?.('done');
  return compiler;
}

function options(ts: typeof TypeScript): TypeScript.TranspileOptions {
  return {
    fileName: 'program.ts',
    reportDiagnostics: true,
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.Preserve,
      sourceMap: true,
      // The program runs as sucrase's output does: sloppy unless it says "use strict" itself.
      alwaysStrict: false,
      ignoreDeprecations: '6.0',
      experimentalDecorators: false,
      removeComments: false,
    },
  };
}

export type Compiled =
  | { readonly ok: true; readonly code: string; readonly sourceMap: string }
  | { readonly ok: false; readonly message: string; readonly line: number; readonly column: number };

/**
 * Compiles a wrapped program: types removed, namespaces and (TC39) decorators lowered to ES2022, nothing else
 * changed (no module transform, no "use strict"). Positions in its output map back through `sourceMap`.
 */
export function compileTypeScript(wrapped: string, told?: (loading: 'start' | 'done') => void): Compiled {
  const ts = load(told);
  const out = ts.transpileModule(wrapped, options(ts));
  const error = out.diagnostics?.find((d) => d.category === ts.DiagnosticCategory.Error);
  if (error) {
    const at =
      error.file && error.start !== undefined
        ? error.file.getLineAndCharacterOfPosition(error.start)
        : { line: 0, character: 0 };
    return {
      ok: false,
      message: ts.flattenDiagnosticMessageText(error.messageText, '\n'),
      line: at.line + 1,
      column: at.character + 1,
    };
  }
  const code = out.outputText.replace(/\n\/\/# sourceMappingURL=\S*\s*$/, '\n');
  return { ok: true, code, sourceMap: out.sourceMapText ?? '{}' };
}
