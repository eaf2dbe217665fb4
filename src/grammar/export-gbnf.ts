/**
 * A grammar as GBNF, llama.cpp's grammar format: `name ::= ...` rules (letters, digits and dashes), "..." literals,
 * [...] classes over code points, ( | ) groups and * + ? {m,n} repetitions; `root` is the start.
 */
import type { Grammar } from './ir.ts';
import { classParts, printExpr } from './print-expr.ts';
import type { Dialect } from './print-expr.ts';

function escapeChar(cp: number, inClass: boolean): string {
  if (cp === 0x22 && !inClass) return '\\"';
  if (cp === 0x5c) return '\\\\';
  if (inClass && (cp === 0x5d || cp === 0x5b || cp === 0x2d || cp === 0x5e))
    return `\\${String.fromCodePoint(cp)}`;
  if (cp === 10) return '\\n';
  if (cp === 13) return '\\r';
  if (cp === 9) return '\\t';
  if (cp < 0x20 || cp === 0x7f) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp >= 0x80)
    return cp > 0xffff ? `\\U${cp.toString(16).padStart(8, '0')}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  return String.fromCodePoint(cp);
}

export const ruleName = (name: string): string => name.replace(/_/g, '-');

const GBNF: Dialect = {
  literal: (s) => `"${Array.from(s, (c) => escapeChar(c.codePointAt(0)!, false)).join('')}"`,
  charClass: (ranges) => {
    const { negated, pairs } = classParts(ranges);
    const body = pairs
      .map(([lo, hi]) =>
        lo === hi ? escapeChar(lo, true) : `${escapeChar(lo, true)}-${escapeChar(hi, true)}`,
      )
      .join('');
    return `[${negated ? '^' : ''}${body}]`;
  },
  ref: ruleName,
  empty: '""',
  // An empty class: no character matches.
  nothing: '[^\\x00-\\U0010ffff]',
  separator: ' ',
};

export function grammarToGbnf(grammar: Grammar): string {
  const lines = [...grammar.rules].map(([name, body]) => `${ruleName(name)} ::= ${printExpr(body, GBNF)}`);
  if (grammar.root !== 'root') lines.unshift(`root ::= ${ruleName(grammar.root)}`);
  return `${lines.join('\n')}\n`;
}
