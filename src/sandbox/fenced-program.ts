/** Info strings of a fence around a JavaScript program, around a TypeScript one, and around a Python one. */
const JAVASCRIPT = new Set(['', 'js', 'javascript', 'mjs', 'cjs']);
const TYPESCRIPT = new Set(['ts', 'typescript', 'mts', 'cts']);
const PYTHON = new Set(['', 'py', 'python', 'python3']);

/** The family of languages a driver runs: the info strings its programs' fences may carry. */
export type FencedLanguage = 'javascript' | 'python';

interface Fence {
  /** Indexes of the opening and the closing fence's lines; no closing one when the reply was cut off. */
  readonly open: number;
  readonly close: number | undefined;
  readonly typescript: boolean;
}

/**
 * Where a program that is one fenced markdown block (```js ... ```, ```ts, ```typescript, ```python, or no language)
 * has its fences; undefined when it is not exactly one such block with nothing but blank lines around it. Line by
 * line: an opening fence of three or more backticks or tildes, closed by a line of the same character at least as
 * long.
 * An opening fence never closed (a model's reply cut off after the code) is one block to the end.
 */
function findFence(lines: readonly string[], language: FencedLanguage): Fence | undefined {
  let open = 0;
  while (open < lines.length && isBlank(lines[open])) open++;
  let close = lines.length - 1;
  while (close > open && isBlank(lines[close])) close--;
  if (close <= open) return undefined;
  const start = /^[ \t]*(`{3,}|~{3,})[ \t]*([^\s`]*)[ \t]*$/.exec(lines[open] ?? '');
  const fence = start?.[1];
  const info = start?.[2]?.toLowerCase();
  if (fence === undefined || info === undefined) return undefined;
  const known = language === 'python' ? PYTHON.has(info) : JAVASCRIPT.has(info) || TYPESCRIPT.has(info);
  if (!known) return undefined;
  const closing = (line: string | undefined): boolean => {
    // smolagents' prompts end a block with its fence and `<end_code>` on one line.
    const t = (line ?? '')
      .trim()
      .replace(/<end_code>$/, '')
      .trimEnd();
    return t.length >= fence.length && [...t].every((c) => c === fence[0]);
  };
  const closed = closing(lines[close]);
  // A second block inside (a closing fence before the last line) means the text is not one block.
  for (let i = open + 1; i < close; i++) if (closing(lines[i])) return undefined;
  return {
    open,
    close: closed ? close : undefined,
    typescript: language === 'javascript' && TYPESCRIPT.has(info),
  };
}

function isBlank(line: string | undefined): boolean {
  return line === undefined || line.trim() === '';
}

/**
 * The program inside, when the whole program is one fenced block: the two fence lines become empty lines, so
 * every line (and column) of the code stays where it was. Anything else is returned unchanged.
 */
export function unfence(code: string, language: FencedLanguage = 'javascript'): string {
  if (!code.includes('```') && !code.includes('~~~')) return code;
  const lines = code.split('\n');
  const fence = findFence(lines, language);
  if (!fence) return code;
  lines[fence.open] = lines[fence.open]?.endsWith('\r') ? '\r' : '';
  if (fence.close !== undefined) lines[fence.close] = lines[fence.close]?.endsWith('\r') ? '\r' : '';
  return lines.join('\n');
}

/** Whether the program is one fenced block marked as TypeScript (```ts, ```typescript): it runs as TypeScript. */
export function fencedAsTypeScript(code: string): boolean {
  if (!code.includes('```') && !code.includes('~~~')) return false;
  return findFence(code.split('\n'), 'javascript')?.typescript === true;
}
