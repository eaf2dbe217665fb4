/**
 * A grammar as one regex (JavaScript syntax, for the `u` flag), where it is regular: every rule inlined.
 * A recursive grammar has no regex (GRAMMAR_NOT_REGULAR); one whose inlining grows past a bound is refused
 * (GRAMMAR_TOO_LARGE) rather than printed.
 */
import { CodecallError } from '../errors/index.ts';
import type { Expr, Grammar } from './ir.ts';
import { classParts, printExpr } from './print-expr.ts';
import type { Dialect } from './print-expr.ts';

const SPECIAL = new Set('\\^$.|?*+()[]{}/-');

function escapeChar(cp: number, inClass: boolean): string {
  const c = String.fromCodePoint(cp);
  if (cp < 0x20 || cp >= 0x7f) {
    return `\\u{${cp.toString(16)}}`;
  }
  if (SPECIAL.has(c) && (inClass ? '\\]^-['.includes(c) : c !== '-')) return `\\${c}`;
  return c;
}

export interface RegexExportOptions {
  /** Longest regex printed (the inlined text); past it GRAMMAR_TOO_LARGE. */
  maxLength?: number;
}

export function grammarToRegex(grammar: Grammar, options: RegexExportOptions = {}): string {
  const maxLength = options.maxLength ?? 1_000_000;
  const inlined = new Map<string, string>();
  const visiting = new Set<string>();
  const dialect: Dialect = {
    literal: (s) => {
      const text = Array.from(s, (c) => escapeChar(c.codePointAt(0)!, false)).join('');
      return s.length > 1 ? `(?:${text})` : text;
    },
    charClass: (ranges) => {
      const { negated, pairs } = classParts(ranges);
      const body = pairs.map(([lo, hi]) =>
        lo === hi ? escapeChar(lo, true) : `${escapeChar(lo, true)}-${escapeChar(hi, true)}`,
      );
      return `[${negated ? '^' : ''}${body.join('')}]`;
    },
    ref: (name) => `(?:${rule(name)})`,
    empty: '(?:)',
    nothing: '[^\\u{0}-\\u{10ffff}]',
    separator: '',
    open: '(?:',
    bar: '|',
  };
  const rule = (name: string): string => {
    const done = inlined.get(name);
    if (done !== undefined) return done;
    if (visiting.has(name)) {
      throw new CodecallError(
        'GRAMMAR_NOT_REGULAR',
        `rule ${name} refers to itself: no regex can hold the grammar`,
        {
          details: { rule: name },
        },
      );
    }
    visiting.add(name);
    const body = grammar.rules.get(name) as Expr;
    const text = printExpr(body, dialect);
    visiting.delete(name);
    if (text.length > maxLength) {
      throw new CodecallError('GRAMMAR_TOO_LARGE', `the regex would be longer than ${maxLength} characters`, {
        details: { max_length: maxLength },
      });
    }
    inlined.set(name, text);
    return text;
  };
  return `^${rule(grammar.root)}$`;
}
