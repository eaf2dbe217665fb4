/**
 * A grammar in the Lark-like syntax llguidance takes: `name: ...` rules (lowercase), "..." literals, /[...]/
 * regex classes, ( | ) groups and * + ? {m,n} repetitions, `start` as the start rule.
 */
import type { Grammar } from './ir.ts';
import { classParts, printExpr } from './print-expr.ts';
import type { Dialect } from './print-expr.ts';

function literalChar(cp: number): string {
  if (cp === 0x22) return '\\"';
  if (cp === 0x5c) return '\\\\';
  if (cp === 10) return '\\n';
  if (cp === 13) return '\\r';
  if (cp === 9) return '\\t';
  if (cp < 0x20 || cp === 0x7f) return `\\u${cp.toString(16).padStart(4, '0')}`;
  return String.fromCodePoint(cp);
}

function classChar(cp: number): string {
  if (cp < 0x20 || cp >= 0x7f || '\\]^-[&~/'.includes(String.fromCodePoint(cp)))
    return `\\x{${cp.toString(16)}}`;
  return String.fromCodePoint(cp);
}

const LARK: Dialect = {
  literal: (s) => `"${Array.from(s, (c) => literalChar(c.codePointAt(0)!)).join('')}"`,
  charClass: (ranges) => {
    const { negated, pairs } = classParts(ranges);
    const body = pairs
      .map(([lo, hi]) => (lo === hi ? classChar(lo) : `${classChar(lo)}-${classChar(hi)}`))
      .join('');
    return `/[${negated ? '^' : ''}${body}]/`;
  },
  ref: (name) => name,
  empty: '""',
  nothing: '/[^\\x{0}-\\x{10ffff}]/',
  separator: ' ',
};

export function grammarToLark(grammar: Grammar): string {
  const lines = [`start: ${grammar.root}`];
  for (const [name, body] of grammar.rules) lines.push(`${name}: ${printExpr(body, LARK)}`);
  return `${lines.join('\n')}\n`;
}
