/**
 * Numbers as grammars: integer ranges exactly (decimal digit automata for any [lo, hi], either end open), and
 * number ranges with integer bounds exactly for numbers written without an exponent (a bounded number's exponent
 * form is not accepted: stricter, never looser).
 */
import { charRanges } from './char-class.ts';
import { alt, chars, lit, NOTHING, opt, rep, seq } from './ir.ts';
import type { Expr } from './ir.ts';

const digit = (lo = 0, hi = 9): Expr => chars(charRanges([[0x30 + lo, 0x30 + hi]]));
const DIGITS = rep(digit(), 1);

/** Any JSON number. */
export const ANY_NUMBER: Expr = seq(
  opt(lit('-')),
  alt(lit('0'), seq(digit(1, 9), rep(digit(), 0))),
  opt(seq(lit('.'), DIGITS)),
  opt(
    seq(
      chars(
        charRanges([
          [0x45, 0x45],
          [0x65, 0x65],
        ]),
      ),
      opt(
        chars(
          charRanges([
            [0x2b, 0x2b],
            [0x2d, 0x2d],
          ]),
        ),
      ),
      DIGITS,
    ),
  ),
);

/** Decimal strings of equal length x..y (digit by digit). */
function sameLength(x: string, y: string): Expr {
  if (x.length === 1) return digit(Number(x), Number(y));
  if (x[0] === y[0]) return seq(lit(x[0]!), sameLength(x.slice(1), y.slice(1)));
  const n = x.length - 1;
  const zeros = '0'.repeat(n);
  const nines = '9'.repeat(n);
  const x0 = Number(x[0]);
  const y0 = Number(y[0]);
  const parts: Expr[] = [];
  let lo = x0;
  let hi = y0;
  if (x.slice(1) !== zeros) {
    parts.push(seq(lit(x[0]!), sameLength(x.slice(1), nines)));
    lo++;
  }
  const tailFull = y.slice(1) === nines;
  if (!tailFull) hi--;
  if (lo <= hi) parts.push(seq(digit(lo, hi), rep(digit(), n, n)));
  if (!tailFull) parts.push(seq(lit(y[0]!), sameLength(zeros, y.slice(1))));
  return alt(...parts);
}

/** Canonical decimal strings (no leading zeros) of the naturals a..b; b null is unbounded. */
export function naturalRange(a: bigint, b: bigint | null): Expr {
  if (a < 0n) a = 0n;
  if (b !== null && a > b) return NOTHING;
  const parts: Expr[] = [];
  const aLen = a.toString().length;
  const lastLen = b === null ? aLen : b.toString().length;
  for (let len = aLen; len <= lastLen; len++) {
    const floor = len === 1 ? 0n : 10n ** BigInt(len - 1);
    const lo = a > floor ? a : floor;
    const ceil = 10n ** BigInt(len) - 1n;
    const hi = b !== null && b < ceil ? b : ceil;
    if (lo <= hi) parts.push(sameLength(lo.toString(), hi.toString()));
  }
  if (b === null) parts.push(seq(digit(1, 9), rep(digit(), aLen)));
  return alt(...parts);
}

/** Integers lo..hi (either end null: unbounded), as JSON writes them ("-0" is not written). */
export function integerRange(lo: bigint | null, hi: bigint | null): Expr {
  if (lo !== null && hi !== null && lo > hi) return NOTHING;
  const parts: Expr[] = [];
  if (lo === null || lo < 0n) {
    // Negative part: magnitudes max(1, -hi)..-lo.
    const magLo = hi !== null && hi < 0n ? -hi : 1n;
    parts.push(seq(lit('-'), naturalRange(magLo, lo === null ? null : -lo)));
  }
  if (hi === null || hi >= 0n) parts.push(naturalRange(lo !== null && lo > 0n ? lo : 0n, hi));
  return alt(...parts);
}

export interface Bound {
  readonly value: bigint;
  readonly exclusive: boolean;
}

const FRACTION = opt(seq(lit('.'), DIGITS));
const ZERO_FRACTION = opt(seq(lit('.'), rep(lit('0'), 1)));
const NONZERO_FRACTION = seq(lit('.'), rep(digit(), 0), digit(1, 9), rep(digit(), 0));

/** Non-negative decimals (no sign, no exponent) in the interval between two natural bounds. */
function nonNegative(lo: Bound, hi: Bound | null): Expr {
  if (hi !== null && (lo.value > hi.value || (lo.value === hi.value && (lo.exclusive || hi.exclusive))))
    return NOTHING;
  if (hi !== null && lo.value === hi.value) return seq(naturalRange(lo.value, lo.value), ZERO_FRACTION);
  const parts: Expr[] = [
    seq(naturalRange(lo.value, lo.value), lo.exclusive ? NONZERO_FRACTION : FRACTION),
    seq(naturalRange(lo.value + 1n, hi === null ? null : hi.value - 1n), FRACTION),
  ];
  if (hi !== null && !hi.exclusive) parts.push(seq(naturalRange(hi.value, hi.value), ZERO_FRACTION));
  return alt(...parts);
}

/** Numbers (no exponent) within integer bounds; null is unbounded. */
export function numberRange(lo: Bound | null, hi: Bound | null): Expr {
  const parts: Expr[] = [];
  // x >= 0 part, then x < 0 as "-" y with y > 0.
  if (hi === null || hi.value > 0n || (hi.value === 0n && !hi.exclusive)) {
    const from = lo === null || lo.value < 0n ? { value: 0n, exclusive: false } : lo;
    parts.push(nonNegative(from, hi));
  }
  if (lo === null || lo.value < 0n) {
    const yLo =
      hi === null || hi.value >= 0n
        ? { value: 0n, exclusive: true }
        : { value: -hi.value, exclusive: hi.exclusive };
    const yHi = lo === null ? null : { value: -lo.value, exclusive: lo.exclusive };
    parts.push(seq(lit('-'), nonNegative(yLo, yHi)));
  }
  return parts.length === 0 ? NOTHING : alt(...parts);
}
