import type { ErrorCode } from '../../errors/index.ts';
import { failure } from '../../errors/index.ts';
import type { SerializedError } from '../../spec/index.ts';
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

type Failure = SerializedError & { line?: number; column?: number };

/** What an exception thrown out of the VM means: a limit, a trap, an interrupt, or the guest's own error. */
export function thrownFailure(
  thrown: unknown,
  at: {
    readonly memoryBytes: number;
    stackExhausted(): boolean;
    /** The failure an interrupt stands for (the deadline, a stop, the CPU budget), if one is due. */
    interrupted(): Failure | null;
    positionIn(text: string): { line: number; column?: number } | undefined;
  },
): Failure {
  const err = thrown as { name?: string; message?: string; stack?: string };
  const message = String(err?.message ?? thrown);
  if (thrown instanceof RangeError && /call stack/i.test(message)) {
    return failure('STACK_OVERFLOW', 'Maximum call stack size exceeded');
  }
  if (thrown instanceof Error && thrown.constructor.name === 'RuntimeError') {
    // A WebAssembly trap.
    return at.stackExhausted()
      ? failure('STACK_OVERFLOW', 'Maximum call stack size exceeded')
      : failure('SANDBOX_CRASHED', `the VM trapped: ${message}`);
  }
  if (message === 'interrupted') {
    return at.interrupted() ?? failure('INTERRUPTED', 'the execution was interrupted');
  }
  if (message === 'out of memory') {
    return failure('MEMORY_LIMIT', `the execution exceeded its memory limit of ${at.memoryBytes} bytes`);
  }
  if (/stack overflow/i.test(message)) return failure('STACK_OVERFLOW', 'Maximum call stack size exceeded');
  const name = typeof err?.name === 'string' ? err.name : 'Error';
  const position: { line: number; column?: number } | undefined =
    at.positionIn(typeof err?.stack === 'string' ? err.stack : '') ?? syntaxLine(message);
  return {
    code: (name === 'SyntaxError' ? 'SYNTAX_ERROR' : 'GUEST_ERROR') satisfies ErrorCode,
    name,
    message: `${name}: ${message}`,
    ...(position === undefined ? {} : { line: position.line }),
    ...(position?.column === undefined ? {} : { column: position.column }),
  };
}

function syntaxLine(message: string): { line: number } | undefined {
  const m = /:(\d+):\d+/.exec(message);
  return m?.[1] === undefined ? undefined : { line: Number(m[1]) };
}
