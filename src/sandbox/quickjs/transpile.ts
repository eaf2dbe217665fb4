import { transform } from 'sucrase';
import { failure } from '../../errors/index.ts';
import type { GuestLanguage, SerializedError } from '../../spec/index.ts';
import { unfence } from '../fenced-program.ts';
import { CLOSE, OPEN, programForms } from './program-forms.ts';
import type { ProgramForms } from './program-forms.ts';
import type { ProgramSource } from './source-position.ts';
import { compileTypeScript } from './typescript-compiler.ts';

/** Where a failure is in the program as written (1-based), when it is known. */
export type Located = SerializedError & { line?: number; column?: number };

/**
 * A program ready for the VM (unfenced, wrapped, its types stripped, in the forms of program-forms.ts), with how
 * its positions map back to the program as written; or why it is not: a SyntaxError as the guest sees it.
 */
export type PreparedProgram =
  | { readonly ok: true; readonly code: string; readonly source?: ProgramSource }
  | { readonly ok: false; readonly error: Located };

export interface PrepareHooks {
  /** Told when the TypeScript compiler starts and ends loading (the first program that needs it; type-stripper.ts). */
  readonly compilerLoad?: (loading: 'start' | 'done') => void;
}

/**
 * A namespace (or its old name, `module`) declared at the start of a line: sucrase would drop it, so the program
 * goes to the TypeScript compiler. A match in a comment or a string only costs the compiler's time.
 */
/**
 * Programs up to this size are parsed (acorn) to be given their forms; a larger one runs as written (its AST
 * could take more heap than the thread preparing it has: ~150 MiB for a crafted megabyte).
 */
export const FORMS_LIMIT_CHARS = 256 * 1024;

const NAMESPACE = /^[ \t]*(?:export[ \t]+)?(?:namespace|module)[ \t]+[A-Za-z_$][\w$.]*[ \t]*\{/m;

/** Whether a TypeScript program needs the compiler for a namespace (see NAMESPACE). */
export function declaresNamespace(program: string): boolean {
  return NAMESPACE.test(program);
}

/**
 * Prepares a program: a program that is one fenced block loses its fences, it is wrapped as the body of an async
 * arrow function (top-level await and return), TypeScript loses its types (sucrase; the TypeScript compiler for
 * namespaces and decorators), and program-forms.ts gives it the forms other code-mode systems accept. Every
 * step but the compiler keeps line numbers, and every position maps back (source-position.ts).
 */
export function prepareProgram(
  code: string,
  language: GuestLanguage,
  hooks: PrepareHooks = {},
): PreparedProgram {
  if (language !== 'javascript' && language !== 'typescript') {
    const error = failure('INVALID_ARGUMENT', `the quickjs driver does not run ${language}`);
    return { ok: false, error: { ...error, name: 'SyntaxError' } };
  }
  const text = unfence(code);
  const wrapped = OPEN + text + CLOSE;
  if (language === 'javascript') return formed(wrapped, 'same');
  let stripped: string;
  try {
    stripped = transform(wrapped, { transforms: ['typescript'], disableESTransforms: true }).code;
  } catch (cause) {
    const message = (cause as Error).message;
    const at = /\((\d+):(\d+)\)$/.exec(message);
    const line = at?.[1] === undefined ? undefined : Number(at[1]);
    // sucrase's column counts from 1, in the wrapped program.
    const column =
      at?.[2] === undefined ? undefined : Math.max(1, Number(at[2]) - (line === 1 ? OPEN.length : 0));
    return syntaxError(message.replace(/\s*\(\d+:\d+\)$/, ''), line, column);
  }
  if (declaresNamespace(text)) return compiled(wrapped, hooks);
  const forms = formsOf(stripped, false);
  // sucrase keeps decorators, which QuickJS does not parse.
  if (forms.kind === 'unparsed' && stripped[forms.at] === '@') return compiled(wrapped, hooks);
  return formed(stripped, 'lines', forms);
}

/** JavaScript programs prepared on this thread, the most recently used last (by the program's text). */
const recent = new Map<string, PreparedProgram>();
const RECENT_ENTRIES = 64;

/**
 * prepareProgram for JavaScript on a sandbox worker, remembering the last programs prepared: an agent, a resume
 * or a replay runs the same text again, and parsing costs more than the rest of a small program's start.
 */
export function prepareJavaScript(code: string): PreparedProgram {
  const known = recent.get(code);
  if (known) {
    recent.delete(code);
    recent.set(code, known);
    return known;
  }
  const prepared = prepareProgram(code, 'javascript');
  recent.set(code, prepared);
  if (recent.size > RECENT_ENTRIES) recent.delete(recent.keys().next().value as string);
  return prepared;
}

function formsOf(code: string, prelude: boolean): ProgramForms {
  return code.length > FORMS_LIMIT_CHARS ? { kind: 'unparsed', at: -1 } : programForms(code, prelude);
}

function formed(
  code: string,
  stripped: ProgramSource['stripped'],
  forms = formsOf(code, typeof stripped === 'object'),
): PreparedProgram {
  if (forms.kind === 'import') {
    const line = code.slice(0, forms.at).split('\n').length;
    return syntaxError(
      `cannot import '${forms.module}': the sandbox has no modules to import; tools are on the tools object and the web APIs are globals`,
      line,
    );
  }
  // What acorn cannot parse goes to QuickJS as it is: its SyntaxError is the one reported.
  const edits = forms.kind === 'program' ? forms.edits : [];
  const ready = forms.kind === 'program' ? forms.code : code;
  if (edits.length === 0 && stripped === 'same') return { ok: true, code: ready };
  return { ok: true, code: ready, source: { edits, stripped } };
}

function compiled(wrapped: string, hooks: PrepareHooks): PreparedProgram {
  const out = compileTypeScript(wrapped, hooks.compilerLoad);
  if (!out.ok) {
    const column = out.line === 1 ? out.column - OPEN.length : out.column;
    return syntaxError(out.message, out.line, Math.max(1, column));
  }
  return formed(out.code, { sourceMap: out.sourceMap });
}

function syntaxError(message: string, line?: number, column?: number): PreparedProgram {
  const error = failure('SYNTAX_ERROR', `SyntaxError: ${message}`);
  return {
    ok: false,
    error: {
      ...error,
      name: 'SyntaxError',
      ...(line === undefined ? {} : { line }),
      ...(line === undefined || column === undefined ? {} : { column }),
    },
  };
}
