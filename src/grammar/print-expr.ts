/** Prints IR expressions in a grammar or regex notation: precedence and grouping here, lexical forms per dialect. */
import type { CharRanges } from './char-class.ts';
import type { Expr } from './ir.ts';

export interface Dialect {
  literal(s: string): string;
  charClass(ranges: CharRanges): string;
  ref(name: string): string;
  readonly empty: string;
  readonly nothing: string;
  readonly separator: string;
  /** How a group opens: "(" in grammars, "(?:" in a regex. */
  readonly open?: string;
  /** Between alternatives: " | " in grammars, "|" in a regex. */
  readonly bar?: string;
}

function quantifier(min: number, max: number): string {
  if (min === 0 && max === Infinity) return '*';
  if (min === 1 && max === Infinity) return '+';
  if (min === 0 && max === 1) return '?';
  if (min === max) return `{${min}}`;
  return max === Infinity ? `{${min},}` : `{${min},${max}}`;
}

/** Precedence: 0 alternation, 1 sequence, 2 atom. */
function print(expr: Expr, dialect: Dialect, context: number): string {
  switch (expr.k) {
    case 'lit':
      return dialect.literal(expr.s);
    case 'chars':
      return dialect.charClass(expr.ranges);
    case 'ref':
      return dialect.ref(expr.name);
    case 'rep': {
      const inner = print(expr.item, dialect, 2);
      return `${inner}${quantifier(expr.min, expr.max)}`;
    }
    case 'seq': {
      if (expr.items.length === 0) return dialect.empty;
      const text = expr.items.map((item) => print(item, dialect, 2)).join(dialect.separator);
      return context > 1 && expr.items.length > 1 ? `${dialect.open ?? '('}${text})` : text;
    }
    case 'alt': {
      if (expr.items.length === 0) return dialect.nothing;
      const text = expr.items.map((item) => print(item, dialect, 1)).join(dialect.bar ?? ' | ');
      return context > 0 ? `${dialect.open ?? '('}${text})` : text;
    }
  }
}

export function printExpr(expr: Expr, dialect: Dialect): string {
  return print(expr, dialect, 0);
}

/** A code point range list is written as its complement when that is shorter ([^"\\] rather than 40 ranges). */
export function classParts(ranges: CharRanges): { negated: boolean; pairs: [number, number][] } {
  const pairs: [number, number][] = [];
  for (let i = 0; i < ranges.length; i += 2) pairs.push([ranges[i]!, ranges[i + 1]!]);
  const complement: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of pairs) {
    if (lo > next) complement.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= 0x10ffff) complement.push([next, 0x10ffff]);
  return complement.length < pairs.length && complement.length > 0
    ? { negated: true, pairs: complement }
    : { negated: false, pairs };
}
