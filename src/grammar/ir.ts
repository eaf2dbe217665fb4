/**
 * The grammar IR: named rules over expressions on Unicode characters. The schema compiler writes it; the byte
 * matcher (nfa.ts), GBNF, Lark and regex exports read it. Character classes are code point ranges; the matcher
 * turns them into UTF-8 byte sequences, the exports print them as classes.
 */
import type { CharRanges } from './char-class.ts';

export type Expr =
  | { readonly k: 'lit'; readonly s: string }
  | { readonly k: 'chars'; readonly ranges: CharRanges }
  | { readonly k: 'seq'; readonly items: readonly Expr[] }
  | { readonly k: 'alt'; readonly items: readonly Expr[] }
  | { readonly k: 'rep'; readonly item: Expr; readonly min: number; readonly max: number }
  | { readonly k: 'ref'; readonly name: string };

export interface Grammar {
  /** The start rule's name; every ref names a key of `rules`. */
  readonly root: string;
  readonly rules: ReadonlyMap<string, Expr>;
}

export const EMPTY: Expr = { k: 'seq', items: [] };
/** Matches nothing (a `false` schema, an empty enum). */
export const NOTHING: Expr = { k: 'alt', items: [] };

export function lit(s: string): Expr {
  return s === '' ? EMPTY : { k: 'lit', s };
}

export function chars(ranges: CharRanges): Expr {
  return { k: 'chars', ranges };
}

export function ref(name: string): Expr {
  return { k: 'ref', name };
}

/** A sequence, flattened; NOTHING anywhere in it makes it NOTHING. */
export function seq(...items: Expr[]): Expr {
  const out: Expr[] = [];
  for (const item of items) {
    if (item.k === 'alt' && item.items.length === 0) return NOTHING;
    if (item.k === 'seq') out.push(...item.items);
    else out.push(item);
  }
  const merged: Expr[] = [];
  for (const item of out) {
    const last = merged[merged.length - 1];
    if (item.k === 'lit' && last?.k === 'lit') merged[merged.length - 1] = lit(last.s + item.s);
    else merged.push(item);
  }
  return merged.length === 1 ? merged[0]! : { k: 'seq', items: merged };
}

export function alt(...items: Expr[]): Expr {
  const out: Expr[] = [];
  for (const item of items) {
    if (item.k === 'alt') out.push(...item.items);
    else out.push(item);
  }
  if (out.length === 0) return NOTHING;
  return out.length === 1 ? out[0]! : { k: 'alt', items: out };
}

export function rep(item: Expr, min: number, max = Infinity): Expr {
  if (max < min) return NOTHING;
  if (item.k === 'alt' && item.items.length === 0) return min === 0 ? EMPTY : NOTHING;
  if (max === 0) return EMPTY;
  if (min === 1 && max === 1) return item;
  return { k: 'rep', item, min, max };
}

export function opt(item: Expr): Expr {
  return rep(item, 0, 1);
}

/** Rule names each expression refers to, in order of first appearance. */
export function refsOf(expr: Expr, into: Set<string> = new Set()): Set<string> {
  switch (expr.k) {
    case 'ref':
      into.add(expr.name);
      break;
    case 'seq':
    case 'alt':
      for (const item of expr.items) refsOf(item, into);
      break;
    case 'rep':
      refsOf(expr.item, into);
      break;
    default:
      break;
  }
  return into;
}

/** A rough size (nodes and literal bytes), to decide when an expression used twice is better as a rule. */
export function exprSize(expr: Expr, limit = Infinity): number {
  switch (expr.k) {
    case 'lit':
      return expr.s.length;
    case 'chars':
      return expr.ranges.length;
    case 'ref':
      return 1;
    case 'rep':
      return 1 + exprSize(expr.item, limit);
    default: {
      let total = 1;
      for (const item of expr.items) {
        total += exprSize(item, limit);
        if (total > limit) break;
      }
      return total;
    }
  }
}
