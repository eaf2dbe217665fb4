import { CodecallError } from '../errors/index.ts';

/** One API call in the paper's inline form: `[Calculator(400/1400) -> 0.29]`. */
export interface InlineCall {
  readonly tool: string;
  /** The call's input as text, between the parentheses. */
  readonly input: string;
  /** The result after `->`; undefined for a call written without one (`[Calculator(400/1400)]`). */
  readonly result?: string;
}

/** A tool's name in the inline form (MCP names may hold `-` and `.`). */
const TOOL_NAME = /^[A-Za-z_][\w.-]{0,199}$/;
/** An inline call longer than this is not one: a stray `[` reads at most this far (findInlineCall: per `[`). */
export const MAX_INLINE_CALL_CHARS = 4096;

/**
 * Escapes text for inside a call: a backslash takes the next character literally, so `\`, `[` and `]` are
 * written `\\`, `\[`, `\]`, and a `-` before `>` is written `\-` (`->` would end the input).
 */
export function escapeInline(text: string): string {
  return text.replace(/[\\[\]]|-(?=>)/g, (c) => `\\${c}`);
}

/** `[Tool(input) -> result]`, or `[Tool(input)]` when the call has no result (an empty one gives `-> ]`). */
export function renderInlineCall(call: InlineCall): string {
  if (!TOOL_NAME.test(call.tool)) {
    throw new CodecallError('INVALID_ARGUMENT', `"${call.tool}" is not a tool name for the inline form`);
  }
  const head = `[${call.tool}(${escapeInline(call.input)})`;
  return call.result === undefined ? `${head}]` : `${head} -> ${escapeInline(call.result)}]`;
}

/** What parseInlineCall found: the call and the end of its text (just past its `]`). */
export interface ParsedInlineCall {
  readonly call: InlineCall;
  readonly end: number;
}

/**
 * Reads the inline call starting at `text[start]` (a `[`); null when there is none there. The input ends at the
 * last `)` before the first unescaped `->` or `]`, so parentheses inside it need no escaping.
 */
export function parseInlineCall(text: string, start = 0): ParsedInlineCall | null {
  if (text[start] !== '[') return null;
  // Sticky and bounded: a text of many `[` must not make each one scan the rest of it.
  const head = /[A-Za-z_][\w.-]{0,199}\(/y;
  head.lastIndex = start + 1;
  if (head.exec(text) === null) return null;
  const open = head.lastIndex - 1;
  const tool = text.slice(start + 1, open);
  const limit = Math.min(text.length, start + MAX_INLINE_CALL_CHARS);
  let input: string | undefined;
  let part = '';
  for (let i = open + 1; i < limit; i++) {
    const c = text[i] as string;
    if (c === '\\') {
      if (i + 1 >= limit) return null;
      part += text[++i];
      continue;
    }
    if (c === '[') return null;
    const arrow = c === '-' && text[i + 1] === '>';
    if (input === undefined && (arrow || c === ']')) {
      const trimmed = part.replace(/\s+$/, '');
      if (!trimmed.endsWith(')')) return null;
      input = trimmed.slice(0, -1);
      if (c === ']') return { call: { tool, input }, end: i + 1 };
      i++;
      if (text[i + 1] === ' ') i++;
      part = '';
      continue;
    }
    if (input !== undefined && c === ']') return { call: { tool, input, result: part }, end: i + 1 };
    if (input !== undefined && arrow) return null;
    part += c;
  }
  return null;
}

/** The first inline call at or after `from`, with where it starts; null when the text has none. */
export function findInlineCall(
  text: string,
  from = 0,
): (ParsedInlineCall & { readonly start: number }) | null {
  for (let at = text.indexOf('[', from); at >= 0; at = text.indexOf('[', at + 1)) {
    const parsed = parseInlineCall(text, at);
    if (parsed !== null) return { ...parsed, start: at };
  }
  return null;
}

/**
 * The text before a call with the call after it, as scored and as written: one space between them unless the
 * text ends in whitespace (a call starts a word, the way tokenizers split `out of 1400 [Calculator(...`).
 */
export function prefixWithCall(prefix: string, call: InlineCall): string {
  const gap = prefix === '' || /\s$/.test(prefix) ? '' : ' ';
  return `${prefix}${gap}${renderInlineCall(call)}`;
}

/** The sample in the inline form, as one JSONL line `{"text": ...}` for language-model fine-tuning. */
export function inlineFormLine(sample: {
  readonly prefix: string;
  readonly continuation: string;
  readonly tool: string;
  readonly input: string;
  readonly result: string;
}): string {
  const call = { tool: sample.tool, input: sample.input, result: sample.result };
  return JSON.stringify({ text: `${prefixWithCall(sample.prefix, call)}${sample.continuation}` });
}
