import { parse } from 'acorn';
import { transform } from 'sucrase';
import type { GuestLanguage } from '../spec/index.ts';

export type ReplyCode =
  { readonly kind: 'code'; readonly code: string } | { readonly kind: 'answer'; readonly text: string };

/** Info strings of fenced blocks that hold the task's code; the empty one (no language named) always does. */
const FENCE_LANGUAGES: Record<GuestLanguage, ReadonlySet<string>> = {
  javascript: new Set(['', 'js', 'javascript', 'mjs', 'cjs', 'jsx', 'ts', 'typescript', 'tsx', 'mts', 'cts']),
  typescript: new Set(['', 'js', 'javascript', 'mjs', 'cjs', 'jsx', 'ts', 'typescript', 'tsx', 'mts', 'cts']),
  python: new Set(['', 'py', 'python', 'python3', 'py3']),
};

/** What a code-mode reply holds: the code of its fenced blocks, or (no code) its text as the final answer. */
export function extractCode(reply: string, language: GuestLanguage): ReplyCode {
  const blocks = fencedBlocks(reply);
  if (blocks.length > 0) {
    const code = blocks
      .filter((b) => FENCE_LANGUAGES[language].has(b.info))
      .map((b) =>
        b.lines
          .join('\n')
          .replace(/^(?:[ \t]*\n)+/, '')
          .trimEnd(),
      )
      .filter((text) => text !== '')
      .join('\n\n');
    return code === '' ? answer(reply) : { kind: 'code', code };
  }
  const program = reply.replace(/^(?:[ \t]*\r?\n)+/, '').trimEnd();
  const isCode = language === 'python' ? looksLikePython(program) : looksLikeScript(program, language);
  return isCode ? { kind: 'code', code: program } : answer(reply);
}

function answer(reply: string): ReplyCode {
  return { kind: 'answer', text: reply.trim() };
}

interface Block {
  readonly info: string;
  readonly lines: string[];
}

/**
 * The fenced code blocks of a markdown reply, in order (CommonMark fences: three or more backticks or tildes,
 * closed by a run of the same character at least as long). A fence left open runs to the end of the reply.
 */
function fencedBlocks(reply: string): Block[] {
  const blocks: Block[] = [];
  let open: { fence: string; indent: number; block: Block } | undefined;
  for (const line of reply.split(/\r?\n/)) {
    if (open === undefined) {
      const start = /^([ \t]*)(`{3,}|~{3,})[ \t]*(.*)$/.exec(line);
      const info = start?.[3] ?? '';
      if (!start || (start[2]?.startsWith('`') && info.includes('`'))) continue;
      const language = (/^[^\s{},]*/.exec(info)?.[0] ?? '').toLowerCase();
      open = { fence: start[2] ?? '', indent: start[1]?.length ?? 0, block: { info: language, lines: [] } };
      blocks.push(open.block);
    } else if (isClosingFence(line, open.fence)) {
      open = undefined;
    } else {
      // Content loses up to the opening fence's indentation (a fence inside a list item).
      const indent = /^[ \t]*/.exec(line)?.[0].length ?? 0;
      open.block.lines.push(line.slice(Math.min(indent, open.indent)));
    }
  }
  return blocks;
}

function isClosingFence(line: string, fence: string): boolean {
  const trimmed = line.trim();
  const char = fence[0] ?? '`';
  return trimmed.length >= fence.length && [...trimmed].every((c) => c === char);
}

/**
 * Whether an unfenced JavaScript/TypeScript reply is a program: it parses as the sandbox runs it (the body of an
 * async function) and does something, a call, an await, an assignment, a declaration or a return, so that `Paris`,
 * `42` or a sentence that happens to parse stay answers.
 */
function looksLikeScript(program: string, language: 'javascript' | 'typescript'): boolean {
  let source = `(async () => {${program}\n})`;
  let ast: unknown;
  try {
    if (language === 'typescript') {
      source = transform(source, { transforms: ['typescript'], disableESTransforms: true }).code;
    }
    ast = parse(source, { ecmaVersion: 'latest', sourceType: 'script' });
  } catch {
    return false;
  }
  return containsAction(ast, source);
}

const ACTIONS = new Set([
  'AwaitExpression',
  'AssignmentExpression',
  'UpdateExpression',
  'VariableDeclaration',
  'FunctionDeclaration',
  'ClassDeclaration',
  'ReturnStatement',
]);

function containsAction(node: unknown, source: string): boolean {
  if (Array.isArray(node)) return node.some((child) => containsAction(child, source));
  if (typeof node !== 'object' || node === null) return false;
  const n = node as { type?: unknown; callee?: { end?: unknown } };
  if (typeof n.type === 'string' && ACTIONS.has(n.type)) return true;
  // `name(` with the parenthesis right after the callee: `Paris (France)` is prose, not a call.
  if (n.type === 'CallExpression' && typeof n.callee?.end === 'number') {
    if (/^(?:\?\.)?\(/.test(source.slice(n.callee.end))) return true;
  }
  return Object.entries(node).some(([key, child]) => key !== 'loc' && containsAction(child, source));
}

const PYTHON_LINES = [
  /^(?:import\s+[\w.]+|from\s+[\w.]+\s+import\s)/,
  /^(?:async\s+)?(?:def|class)\s+\w+.*:$/,
  /^(?:async\s+)?(?:for|while|if|elif|with)\b.*:$/,
  /^(?:else|try|finally)\s*:$/,
  /^except\b.*:$/,
  /^(?:return|raise|assert|yield|await|del|global|nonlocal)\b/,
  /^(?:pass|break|continue)$/,
  /^@[\w.]+/,
  // Assignments: `x = `, `x += `, `a, b = `, `d["k"] = `, `obj.attr = `.
  /^[A-Za-z_][\w.]*(?:\[[^\]]*\])?(?:\s*,\s*[A-Za-z_][\w.]*)*\s*(?:[-+*/%&|^@]|\/\/|\*\*|<<|>>)?=(?!=)/,
  // Calls at the start of a line: `print(`, `tools.get_weather(`, `final_answer(`.
  /^[A-Za-z_][\w.]*\(/,
];

/** A sentence: an unindented line opening with three words (`The answer is`, `Here is the`). */
const PROSE = /^[A-Za-z][\w'’-]*[,;:]?\s+[A-Za-z][\w'’-]*[,;:]?\s+[A-Za-z][\w'’-]*/;

/** Whether an unfenced Python reply is a program: some line reads as Python and none as a sentence. */
function looksLikePython(program: string): boolean {
  let code = false;
  for (const raw of program.split(/\r?\n/)) {
    const line = raw.replace(/\s+#.*$/, '').trimEnd();
    const trimmed = line.trimStart();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    if (PYTHON_LINES.some((pattern) => pattern.test(trimmed))) code = true;
    else if (line === trimmed && PROSE.test(trimmed)) return false;
  }
  return code;
}
