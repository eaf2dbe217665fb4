import { programPosition } from './source-position.ts';
import type { Position, ProgramSource } from './source-position.ts';

/** The program as written, the code the VM runs and how the two relate. */
export interface RunProgram {
  readonly written: string;
  readonly code: string;
  readonly source: ProgramSource | undefined;
}

/**
 * Where the first frame of the program in `text` (a stack, or a SyntaxError's message) is, in the program as
 * written; when that cannot be told, the line QuickJS gave (every step but the TypeScript compiler keeps lines).
 */
export function errorPosition(
  text: string,
  filename: string,
  program: RunProgram | null,
): { line: number; column?: number } | undefined {
  const escaped = filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`${escaped}:(\\d+)(?::(\\d+))?`).exec(text);
  if (m?.[1] === undefined) return undefined;
  const line = Number(m[1]);
  // The TypeScript compiler's output has lines of its own: only its source map places them.
  const linesKept = typeof program?.source?.stripped !== 'object';
  if (m[2] === undefined || !program) return linesKept ? { line } : undefined;
  const at: Position = { line, column: Number(m[2]) };
  let mapped: Position | undefined;
  try {
    mapped = programPosition(at, program.code, program.source, program.written);
  } catch {
    mapped = undefined;
  }
  return mapped ?? (linesKept ? { line } : undefined);
}
