import { unfence } from '../fenced-program.ts';
import { OPEN } from './program-forms.ts';
import type { ProgramEdit } from './program-forms.ts';

/**
 * How the code QuickJS runs relates to the program as written, so that a position QuickJS reports (a stack
 * frame, a SyntaxError) is reported in the program's own lines and columns. The program was unfenced (fence
 * lines emptied: nothing moves), wrapped (line 1 moves right by `OPEN.length`), stripped of its types, then
 * rewritten by `edits` (on one line each: lines never move).
 */
export interface ProgramSource {
  readonly edits: readonly ProgramEdit[];
  /**
   * How the stripped code relates to the wrapped one: `same` (JavaScript), `lines` (sucrase: the same lines,
   * types removed from them), or the source map of the TypeScript compiler's output.
   */
  readonly stripped: 'same' | 'lines' | { readonly sourceMap: string };
}

export interface Position {
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly column: number;
}

/**
 * Where `at` (a 1-based line and column of `code`, the code QuickJS ran) is in `program` (the text the caller
 * gave), or undefined when it is not inside the program (the wrapper, a compiler's helper).
 */
export function programPosition(
  at: Position,
  code: string,
  source: ProgramSource | undefined,
  program: string,
): Position | undefined {
  let stripped: Position = at;
  let strippedText = code;
  if (source && source.edits.length > 0) {
    const offset = offsetOf(code, at);
    if (offset === undefined) return undefined;
    strippedText = unapply(code, source.edits);
    stripped = positionOf(strippedText, beforeEdits(offset, source.edits));
  }
  const kind = source?.stripped ?? 'same';
  let wrapped: Position | undefined = stripped;
  if (kind === 'lines') {
    const from = lineOf(strippedText, stripped.line);
    const to = wrappedLine(program, stripped.line);
    wrapped =
      from === undefined || to === undefined
        ? undefined
        : { line: stripped.line, column: alignColumn(from, to, stripped.column - 1) + 1 };
  } else if (kind !== 'same') {
    wrapped = throughSourceMap(kind.sourceMap, stripped);
  }
  if (!wrapped) return undefined;
  const lines = program.split('\n').length;
  if (wrapped.line < 1 || wrapped.line > lines) return undefined;
  const column = wrapped.line === 1 ? wrapped.column - OPEN.length : wrapped.column;
  return { line: wrapped.line, column: Math.max(1, column) };
}

function offsetOf(text: string, at: Position): number | undefined {
  let start = 0;
  for (let line = 1; line < at.line; line++) {
    const next = text.indexOf('\n', start);
    if (next < 0) return undefined;
    start = next + 1;
  }
  return start + at.column - 1;
}

function positionOf(text: string, offset: number): Position {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

function lineOf(text: string, line: number): string | undefined {
  return text.split('\n')[line - 1];
}

/** Line `line` of the wrapped program (`OPEN + unfence(program) + CLOSE`). */
function wrappedLine(program: string, line: number): string | undefined {
  const text = lineOf(unfence(program), line);
  return line === 1 && text !== undefined ? OPEN + text : text;
}

/** The text before the edits: every edit's `inserted` put back to what it `removed`. */
function unapply(code: string, edits: readonly ProgramEdit[]): string {
  let out = '';
  let pos = 0;
  let shift = 0;
  for (const e of edits) {
    const at = e.at + shift;
    out += code.slice(pos, at) + e.removed;
    pos = at + e.inserted.length;
    shift += e.inserted.length - e.removed.length;
  }
  return out + code.slice(pos);
}

/** An offset of the edited code as an offset of the text before the edits (inside an insertion: where it is). */
function beforeEdits(offset: number, edits: readonly ProgramEdit[]): number {
  let shift = 0;
  for (const e of edits) {
    const at = e.at + shift;
    if (offset < at) break;
    if (offset < at + e.inserted.length) return e.at;
    shift += e.inserted.length - e.removed.length;
  }
  return offset - shift;
}

/** Longest lines aligned exactly; past this many cells the alignment is greedy. */
const ALIGN_CELLS = 4_000_000;

/**
 * The 0-based column of `to` that column `column` of `from` came from, where `from` is `to` with some text
 * removed (types) and perhaps some added: the two lines aligned by their longest common subsequence.
 */
export function alignColumn(from: string, to: string, column: number): number {
  const n = from.length;
  const m = to.length;
  const mapped: number[] = new Array<number>(n).fill(-1);
  if ((n + 1) * (m + 1) <= ALIGN_CELLS) {
    // suffix[i][j]: the LCS length of from[i..] and to[j..].
    const width = m + 1;
    const suffix = new Uint16Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        suffix[i * width + j] =
          from[i] === to[j]
            ? (suffix[(i + 1) * width + j + 1] ?? 0) + 1
            : Math.max(suffix[(i + 1) * width + j] ?? 0, suffix[i * width + j + 1] ?? 0);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (from[i] === to[j] && suffix[i * width + j] === (suffix[(i + 1) * width + j + 1] ?? 0) + 1) {
        mapped[i++] = j++;
      } else if ((suffix[(i + 1) * width + j] ?? 0) >= (suffix[i * width + j + 1] ?? 0)) {
        i++;
      } else {
        j++;
      }
    }
  } else {
    for (let i = 0, j = 0; i < n && j < m; j++) if (from[i] === to[j]) mapped[i++] = j;
  }
  for (let i = Math.max(0, column); i < n; i++)
    if (mapped[i] !== undefined && mapped[i]! >= 0) return mapped[i]!;
  return Math.min(m, column);
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Follows a source map (version 3, one source) from a generated position to the source's. */
export function throughSourceMap(sourceMap: string, at: Position): Position | undefined {
  let mappings: unknown;
  try {
    mappings = (JSON.parse(sourceMap) as { mappings?: unknown }).mappings;
  } catch {
    return undefined;
  }
  if (typeof mappings !== 'string') return undefined;
  const lines = mappings.split(';');
  let sourceLine = 0;
  let sourceColumn = 0;
  let best: { generated: number; line: number; column: number } | undefined;
  let first: { line: number; column: number } | undefined;
  for (let l = 0; l < lines.length && l < at.line; l++) {
    let generated = 0;
    for (const segment of (lines[l] ?? '').split(',')) {
      if (segment === '') continue;
      const fields = decodeVlq(segment);
      generated += fields[0] ?? 0;
      if (fields.length < 4) continue;
      sourceLine += fields[2] ?? 0;
      sourceColumn += fields[3] ?? 0;
      if (l !== at.line - 1) continue;
      first ??= { line: sourceLine, column: sourceColumn };
      if (generated <= at.column - 1) best = { generated, line: sourceLine, column: sourceColumn };
    }
  }
  if (best) return { line: best.line + 1, column: best.column + (at.column - 1 - best.generated) + 1 };
  return first ? { line: first.line + 1, column: first.column + 1 } : undefined;
}

function decodeVlq(segment: string): number[] {
  const out: number[] = [];
  let value = 0;
  let shift = 0;
  for (const c of segment) {
    const digit = BASE64.indexOf(c);
    if (digit < 0) return out;
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    out.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return out;
}
