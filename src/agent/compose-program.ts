import * as acorn from 'acorn';
import { transform } from 'sucrase';
import { CodecallError } from '../errors/index.ts';
import type { TypeScriptLowering } from '../spec/index.ts';

/**
 * Composes the code blocks of an agent's steps into one program, notebook style: names declared at the top
 * level of a block are visible in later blocks because the earlier (successful) blocks are re-run first.
 *
 * Every block's top-level declarations become assignments to `let`s shared by all blocks, edited in place
 * so each block keeps its line numbers. Names starting with `__cc_` are reserved for the composed program's
 * own helpers (a block may not declare one at its top level); `final_answer` is provided to every block.
 */

export interface ComposeOptions {
  /** Earlier successful blocks, oldest first (they are re-run with their console output suppressed). */
  readonly earlier: readonly string[];
  /** The block of this step. */
  readonly current: string;
  readonly language: 'javascript' | 'typescript';
  /** For blocks sucrase cannot strip (a namespace, decorators); without it sucrase strips every block. */
  readonly lowering?: TypeScriptLowering;
}

export interface ComposedProgram {
  /** JavaScript to run with language 'javascript'; returns `{ final: boolean, value: unknown }`. */
  readonly code: string;
  /** 1-based line of `code` where `current`'s first line is. */
  readonly currentFirstLine: number;
  /** Number of lines of `current` as it runs. */
  readonly currentLines: number;
  /** Set when the compiler lowered `current` (its lines moved): the line of `current` a line of it came from. */
  readonly currentSourceLine?: (line: number) => number | undefined;
}

const PREFIX = '__cc_';
const OPEN = '(async () => {';
const CLOSE = '\n})';

// The helpers, one per line. `final_answer` records its value and throws a sentinel that `__cc_block`
// recognises; the recorded value wins even when the guest catches the sentinel. Shared names start out as
// the global of that name, so shadowing a global (say `console`) takes effect only once the block runs.
const PRELUDE = [
  'const __cc_global = globalThis;',
  'const __cc_quiet = Object.freeze({ log() {}, info() {}, warn() {}, error() {}, debug() {} });',
  "const __cc_stop = Object.freeze({ name: 'FinalAnswer', message: 'final_answer() ends the block' });",
  'let __cc_answer = { given: false, value: undefined };',
  'let __cc_value;',
  'let final_answer = (value) => { __cc_answer = { given: true, value }; throw __cc_stop; };',
  "const __cc_name = (fn, name) => Object.defineProperty(fn, 'name', { value: name });",
  'const __cc_block = async (body, quiet) => {',
  '  __cc_answer = { given: false, value: undefined };',
  '  const done = (value) => (__cc_answer.given ? { final: true, value: __cc_answer.value } : { final: false, value });',
  '  try { return done(await body(quiet)); } catch (e) { if (__cc_answer.given) return done(); throw e; }',
  '};',
];

export function composeProgram(options: ComposeOptions): ComposedProgram {
  const earlier = options.earlier.map((source) =>
    rewriteBlock(source, options.language, false, options.lowering),
  );
  const current = rewriteBlock(options.current, options.language, true, options.lowering);
  const names = new Set([...earlier, current].flatMap((block) => block.names));
  names.delete('final_answer');
  const lines = [...PRELUDE];
  if (names.size > 0) lines.push(`let ${[...names].map((n) => `${n} = __cc_global.${n}`).join(', ')};`);
  // Shadowing `console` by a parameter silences the earlier blocks (the guest's console is frozen).
  for (const block of earlier)
    lines.push(`await __cc_block(async (console) => {${block.body}}, __cc_quiet);`);
  const currentFirstLine = lines.join('\n').split('\n').length + 1;
  lines.push(`return await __cc_block(async () => {${current.body}});`);
  const written = lineCount(options.current);
  const lowered = current.sourceLine;
  if (lowered === undefined) return { code: lines.join('\n'), currentFirstLine, currentLines: written };
  return {
    code: lines.join('\n'),
    currentFirstLine,
    currentLines: lineCount(current.body),
    currentSourceLine: (line) => {
      const at = lowered(line);
      return at !== undefined && at >= 1 && at <= written ? at : undefined;
    },
  };
}

/** Maps a line of the composed program to the line in `current` (1-based), or undefined when outside it. */
export function lineInCurrent(program: ComposedProgram, line: number | undefined): number | undefined {
  if (line === undefined) return undefined;
  const inCurrent = line - program.currentFirstLine + 1;
  if (inCurrent < 1 || inCurrent > program.currentLines) return undefined;
  return program.currentSourceLine ? program.currentSourceLine(inCurrent) : inCurrent;
}

interface Rewritten {
  /** The block's statements, rewritten, ending with a newline. */
  readonly body: string;
  /** Names declared at its top level. */
  readonly names: readonly string[];
  /** Set when the compiler lowered it: the line of the block a line of `body` came from. */
  readonly sourceLine?: (line: number) => number | undefined;
}

/** Replaces `[at, end)` of the block with `text` (an insertion when `at === end`). */
interface Splice {
  readonly at: number;
  readonly end: number;
  readonly text: string;
}

function rewriteBlock(
  source: string,
  language: ComposeOptions['language'],
  isCurrent: boolean,
  lowering: TypeScriptLowering | undefined,
): Rewritten {
  const fail = (message: string, line: number | undefined, cause?: unknown): never => {
    if (!isCurrent) throw new CodecallError('INTERNAL', `an earlier block no longer parses: ${message}`);
    throw new CodecallError('SYNTAX_ERROR', `SyntaxError: ${message}`, {
      details: line === undefined ? {} : { line },
      cause,
    });
  };
  const { code, body, sourceLine } = parseBlock(source, language, fail, lowering);
  const splices: Splice[] = [];
  const names: string[] = [];
  const hoisted: string[] = [];
  const declare = (id: acorn.Pattern, at: number): void => {
    for (const name of boundNames(id)) {
      if (name.startsWith(PREFIX))
        fail(`${name}: names starting with ${PREFIX} are reserved`, lineAt(code, at));
      names.push(name);
    }
  };
  const insert = (at: number, text: string): void => void splices.push({ at, end: at, text });
  for (const statement of body.body) {
    if (
      statement.type === 'VariableDeclaration' &&
      statement.kind !== 'using' &&
      statement.kind !== 'await using'
    ) {
      // `const a = 1, {b} = o;` -> `;a = 1, ({b} = o);` (the `;`s guard against ASI hazards).
      const first = statement.declarations[0];
      if (first === undefined) continue;
      splices.push({ at: statement.start, end: first.start, text: ';' });
      for (const d of statement.declarations) {
        declare(d.id, d.start);
        if (d.id.type === 'ObjectPattern') {
          insert(d.start, '(');
          insert(d.end, ')');
        } else if (d.init == null && statement.kind !== 'var') {
          insert(d.end, ' = undefined'); // `var x;` keeps x's value, as a redeclared var does.
        }
      }
      if (code[statement.end - 1] !== ';') insert(statement.end, ';');
    } else if (statement.type === 'FunctionDeclaration') {
      // Renamed, and assigned when the block starts: a call before the declaration still works.
      const name = statement.id.name;
      declare(statement.id, statement.start);
      splices.push({ at: statement.id.start, end: statement.id.end, text: PREFIX + 'fn_' + name });
      hoisted.push(`${name} = __cc_name(${PREFIX}fn_${name}, '${name}');`);
    } else if (statement.type === 'ClassDeclaration') {
      declare(statement.id, statement.start);
      insert(statement.start, `;${statement.id.name} = `);
      insert(statement.end, ';');
    }
  }
  const last = body.body.at(-1);
  if (last?.type === 'ExpressionStatement' && last.directive === undefined) {
    // Notebook style: a trailing expression is the block's value. Assigned, not returned: QuickJS places an
    // error inside a `return` statement on the line before.
    const sequence = last.expression.type === 'SequenceExpression';
    insert(last.expression.start, sequence ? '__cc_value = (' : '__cc_value = ');
    insert(last.end, sequence ? ');return __cc_value;' : ';return __cc_value;');
  }
  if (hoisted.length > 0) {
    // After the directive prologue, which must stay first; before any other edit at the same place.
    let at = body.start + 1;
    for (const s of body.body) {
      if (s.type !== 'ExpressionStatement' || s.directive === undefined) break;
      at = s.end;
    }
    splices.unshift({ at, end: at, text: `;${hoisted.join(' ')}` });
  }
  const rewritten = applySplices(code, body.start + 1, body.end - 1, splices);
  return { body: rewritten, names, ...(sourceLine ? { sourceLine } : {}) };
}

type Fail = (message: string, line: number | undefined, cause?: unknown) => never;

interface ParsedBlock {
  readonly code: string;
  readonly body: acorn.BlockStatement;
  readonly sourceLine?: (line: number) => number | undefined;
}

/**
 * Type-strips and parses a block wrapped as an async arrow (top-level await and return are legal): sucrase, or
 * the TypeScript compiler (`lowering`) for a namespace, which sucrase drops, or decorators, which it keeps.
 */
function parseBlock(
  source: string,
  language: ComposeOptions['language'],
  fail: Fail,
  lowering: TypeScriptLowering | undefined,
): ParsedBlock {
  const wrapped = OPEN + source + CLOSE;
  if (language === 'javascript') return { code: wrapped, body: parseWrapped(wrapped, fail) };
  if (lowering?.needs(source)) return lowered(wrapped, lowering, fail);
  let code = wrapped;
  try {
    code = transform(code, { transforms: ['typescript'], disableESTransforms: true }).code;
  } catch (cause) {
    const message = (cause as Error).message;
    const line = /\((\d+):\d+\)/.exec(message)?.[1];
    fail(message.replace(/\s*\(\d+:\d+\)$/, ''), line === undefined ? undefined : Number(line), cause);
  }
  // sucrase keeps decorators: acorn stops at the first `@`.
  const onDecorator = (at: number): boolean => lowering !== undefined && code[at] === '@';
  try {
    return { code, body: parseWrapped(code, fail, onDecorator) };
  } catch (e) {
    if (!(e instanceof DecoratorFound) || !lowering) throw e;
    return lowered(wrapped, lowering, fail);
  }
}

/** acorn stopped at a decorator sucrase kept: the block goes to the compiler. */
class DecoratorFound extends Error {}

/**
 * The compiler's output, its helpers (decorators') moved into the wrapper's first line so the block stays one
 * arrow function: a line of the result is the output's line `prelude` lines further down.
 */
function lowered(wrapped: string, lowering: TypeScriptLowering, fail: Fail): ParsedBlock {
  const out = lowering.lower(wrapped);
  if (!out.ok) return fail(out.message, out.line);
  const text = out.code.replace(/;?\s*$/, '');
  const at = text.startsWith(OPEN) ? 0 : text.lastIndexOf(`\n${OPEN}`) + 1;
  if (at < 0 || !text.startsWith(OPEN, at)) return fail('the TypeScript compiler gave no program', undefined);
  const prelude = text.slice(0, at);
  const shift = lineCount(prelude) - 1;
  const code = OPEN + prelude.replace(/\n/g, ' ') + text.slice(at + OPEN.length);
  return { code, body: parseWrapped(code, fail), sourceLine: (line) => out.sourceLine(line + shift) };
}

function parseWrapped(code: string, fail: Fail, onDecorator?: (at: number) => boolean): acorn.BlockStatement {
  let program: acorn.Program;
  try {
    program = acorn.parse(code, { ecmaVersion: 'latest' });
  } catch (cause) {
    if (onDecorator?.((cause as { pos?: number }).pos ?? -1)) throw new DecoratorFound('a decorator');
    const loc = (cause as { loc?: { line?: unknown } }).loc;
    const message = (cause as Error).message.replace(/\s*\(\d+:\d+\)$/, '');
    return fail(message, typeof loc?.line === 'number' ? loc.line : undefined, cause);
  }
  // The wrapper must hold the whole block: a stray `})` could otherwise close it early.
  const statement = program.body.length === 1 ? program.body[0] : undefined;
  const arrow = statement?.type === 'ExpressionStatement' ? statement.expression : undefined;
  const body = arrow?.type === 'ArrowFunctionExpression' ? arrow.body : undefined;
  if (body?.type !== 'BlockStatement' || body.end !== code.length - 1 || !code.startsWith(OPEN)) {
    const at = body?.end ?? code.length;
    return fail("Unexpected token '}'", lineAt(code, Math.min(at, code.length - CLOSE.length)));
  }
  return body;
}

/** The identifiers a declaration pattern binds. */
function boundNames(pattern: acorn.Pattern): string[] {
  switch (pattern.type) {
    case 'Identifier':
      return [pattern.name];
    case 'ObjectPattern':
      return pattern.properties.flatMap((p) => boundNames(p.type === 'RestElement' ? p : p.value));
    case 'ArrayPattern':
      return pattern.elements.flatMap((e) => (e === null ? [] : boundNames(e)));
    case 'RestElement':
      return boundNames(pattern.argument);
    case 'AssignmentPattern':
      return boundNames(pattern.left);
    case 'MemberExpression':
      return []; // Only in assignment targets, never in a declaration.
  }
}

/** `code.slice(from, to)` with the splices applied (splices at the same place apply in list order). */
function applySplices(code: string, from: number, to: number, splices: readonly Splice[]): string {
  const sorted = splices.map((s, i) => ({ s, i })).sort((a, b) => a.s.at - b.s.at || a.i - b.i);
  let out = '';
  let pos = from;
  for (const { s } of sorted) {
    out += code.slice(pos, s.at) + s.text;
    pos = s.end;
  }
  return out + code.slice(pos, to);
}

function lineAt(code: string, offset: number): number {
  return lineCount(code.slice(0, offset));
}

function lineCount(text: string): number {
  return text.split('\n').length;
}
