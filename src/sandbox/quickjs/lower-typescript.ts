import type { LoweredTypeScript, TypeScriptLowering } from '../../spec/index.ts';
import { throughSourceMap } from './source-position.ts';
import { declaresNamespace } from './transpile.ts';
import { compileTypeScript } from './typescript-compiler.ts';

/**
 * The exec path's TypeScript compiler for an agent's blocks (agent mode composes its blocks before they reach a
 * driver). It runs on the caller's thread: the compiler loads there once (~0.5 s), and only for blocks with a
 * namespace or decorators.
 */
export const typeScriptLowering: TypeScriptLowering = {
  needs: declaresNamespace,
  lower(wrapped: string): LoweredTypeScript {
    const out = compileTypeScript(wrapped);
    if (!out.ok) return out;
    return {
      ok: true,
      code: out.code,
      sourceLine: (line) => throughSourceMap(out.sourceMap, { line, column: 1 })?.line,
    };
  },
};
