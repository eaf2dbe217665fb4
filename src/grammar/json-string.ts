/**
 * Characters as they appear inside a JSON string: a character-level expression (a pattern, a format, a key set)
 * becomes the bytes a JSON encoder may write for it. Raw characters where JSON allows them, the short escapes,
 * and \u00XX for control characters; an unconstrained character also takes any \uXXXX. Other \u escapes of
 * ordinary characters are not accepted where the characters are constrained (a key spelled "\u0061" is not "a").
 */
import { ANY_CHAR, charRanges, contains, intersect, isEmpty, sameRanges, subtract } from './char-class.ts';
import type { CharRanges } from './char-class.ts';
import { alt, chars, lit, NOTHING, rep, seq } from './ir.ts';
import type { Expr } from './ir.ts';

const CONTROLS = charRanges([[0, 0x1f]]);
const NEEDS_ESCAPE = charRanges([
  [0, 0x1f],
  [0x22, 0x22],
  [0x5c, 0x5c],
]);
const SHORT: Record<number, string> = { 8: 'b', 9: 't', 10: 'n', 12: 'f', 13: 'r', 0x22: '"', 0x5c: '\\' };
const HEX = charRanges([
  [0x30, 0x39],
  [0x41, 0x46],
  [0x61, 0x66],
]);

function hexDigitClass(values: number[]): Expr {
  const pairs: [number, number][] = [];
  for (const v of values) {
    const c = v.toString(16);
    pairs.push([c.codePointAt(0)!, c.codePointAt(0)!]);
    const upper = c.toUpperCase().codePointAt(0)!;
    pairs.push([upper, upper]);
  }
  return chars(charRanges(pairs));
}

/** The encodings of one character class inside a JSON string. */
export function encodeClass(set: CharRanges): Expr {
  if (sameRanges(set, ANY_CHAR)) return ANY_JSON_CHAR;
  const options: Expr[] = [];
  const raw = subtract(set, NEEDS_ESCAPE);
  if (!isEmpty(raw)) options.push(chars(raw));
  if (contains(set, 0x2f)) options.push(lit('\\/'));
  for (const cp of [0x22, 0x5c]) if (contains(set, cp)) options.push(lit(`\\${SHORT[cp]}`));
  const controls = intersect(set, CONTROLS);
  for (let cp = 0; cp <= 0x1f; cp++)
    if (SHORT[cp] !== undefined && contains(controls, cp)) options.push(lit(`\\${SHORT[cp]}`));
  for (const high of [0, 1]) {
    const lows: number[] = [];
    for (let low = 0; low < 16; low++) if (contains(controls, high * 16 + low)) lows.push(low);
    if (lows.length > 0) options.push(seq(lit(`\\u00${high}`), hexDigitClass(lows)));
  }
  return options.length === 0 ? NOTHING : alt(...options);
}

/** Any one character of a JSON string's content. */
export const ANY_JSON_CHAR: Expr = alt(
  chars(subtract(ANY_CHAR, NEEDS_ESCAPE)),
  seq(
    lit('\\'),
    alt(
      chars(charRanges([...'"\\/bfnrt'].map((c) => [c.charCodeAt(0), c.charCodeAt(0)]))),
      seq(lit('u'), rep(chars(HEX), 4, 4)),
    ),
  ),
);

/** A character-level expression (every `chars` one character) as the content of a JSON string. */
export function encodeChars(expr: Expr, anyChar: Expr = ANY_JSON_CHAR): Expr {
  switch (expr.k) {
    case 'chars':
      return sameRanges(expr.ranges, ANY_CHAR) ? anyChar : encodeClass(expr.ranges);
    case 'lit':
      return seq(...Array.from(expr.s, (c) => encodeClass([c.codePointAt(0)!, c.codePointAt(0)!])));
    case 'seq':
      return seq(...expr.items.map((item) => encodeChars(item, anyChar)));
    case 'alt':
      return alt(...expr.items.map((item) => encodeChars(item, anyChar)));
    case 'rep':
      return rep(encodeChars(expr.item, anyChar), expr.min, expr.max);
    case 'ref':
      return expr;
  }
}

/** A JSON string literal exactly as JSON.stringify writes it. */
export function stringLiteral(value: string): Expr {
  return lit(JSON.stringify(value));
}
