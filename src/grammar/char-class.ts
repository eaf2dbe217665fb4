/** Sets of Unicode code points as sorted, disjoint, non-adjacent inclusive ranges [lo, hi, lo, hi, ...]. */
export type CharRanges = readonly number[];

export const MAX_CODE_POINT = 0x10ffff;
export const ANY_CHAR: CharRanges = [0, MAX_CODE_POINT];

export function charRanges(pairs: readonly (readonly [number, number])[]): CharRanges {
  const sorted = pairs.filter(([lo, hi]) => lo <= hi).sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [lo, hi] of sorted) {
    const last = out.length - 1;
    if (last > 0 && lo <= out[last]! + 1) out[last] = Math.max(out[last]!, hi);
    else out.push(lo, hi);
  }
  return out;
}

export function single(cp: number): CharRanges {
  return [cp, cp];
}

function pairsOf(set: CharRanges): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < set.length; i += 2) out.push([set[i]!, set[i + 1]!]);
  return out;
}

export function union(...sets: CharRanges[]): CharRanges {
  return charRanges(sets.flatMap(pairsOf));
}

export function negate(set: CharRanges): CharRanges {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of pairsOf(set)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return charRanges(out);
}

export function intersect(a: CharRanges, b: CharRanges): CharRanges {
  return negate(union(negate(a), negate(b)));
}

export function subtract(a: CharRanges, b: CharRanges): CharRanges {
  return intersect(a, negate(b));
}

export function isEmpty(set: CharRanges): boolean {
  return set.length === 0;
}

export function contains(set: CharRanges, cp: number): boolean {
  for (let i = 0; i < set.length; i += 2) if (cp >= set[i]! && cp <= set[i + 1]!) return true;
  return false;
}

export function sameRanges(a: CharRanges, b: CharRanges): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** The one code point of a single-character set, or undefined. */
export function singleCodePoint(set: CharRanges): number | undefined {
  return set.length === 2 && set[0] === set[1] ? set[0] : undefined;
}

export function rangePairs(set: CharRanges): [number, number][] {
  return pairsOf(set);
}
