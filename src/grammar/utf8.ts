/**
 * Code point ranges as UTF-8 byte-range sequences (the matcher works on bytes): each result is a list of
 * [lo, hi] byte ranges, one per byte, whose product is exactly the UTF-8 encodings of the range. Surrogates
 * (D800-DFFF) have no UTF-8 form and are left out.
 */
import { rangePairs } from './char-class.ts';
import type { CharRanges } from './char-class.ts';

export type ByteSeq = [number, number][];

const BOUNDS = [0x7f, 0x7ff, 0xffff, 0x10ffff];

function encode(cp: number): number[] {
  if (cp < 0x80) return [cp];
  if (cp < 0x800) return [0xc0 | (cp >> 6), 0x80 | (cp & 63)];
  if (cp < 0x10000) return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
  return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
}

function splitSameLength(lo: number, hi: number, out: ByteSeq[]): void {
  const n = encode(lo).length;
  for (let i = 1; i < n; i++) {
    const m = (1 << (6 * i)) - 1;
    if ((lo & ~m) !== (hi & ~m)) {
      if ((lo & m) !== 0) {
        splitSameLength(lo, lo | m, out);
        splitSameLength((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) !== m) {
        splitSameLength(lo, (hi & ~m) - 1, out);
        splitSameLength(hi & ~m, hi, out);
        return;
      }
    }
  }
  const a = encode(lo);
  const b = encode(hi);
  out.push(a.map((byte, i) => [byte, b[i]!]));
}

export function utf8Sequences(set: CharRanges): ByteSeq[] {
  const out: ByteSeq[] = [];
  for (const [lo0, hi0] of rangePairs(set)) {
    // Without surrogates.
    const parts: [number, number][] =
      hi0 < 0xd800 || lo0 > 0xdfff
        ? [[lo0, hi0]]
        : [
            [lo0, Math.min(hi0, 0xd7ff)],
            [Math.max(lo0, 0xe000), hi0],
          ];
    for (const [plo, phi] of parts) {
      let lo = plo;
      for (const bound of BOUNDS) {
        if (lo > phi) break;
        if (lo > bound) continue;
        const hi = Math.min(phi, bound);
        splitSameLength(lo, hi, out);
        lo = hi + 1;
      }
    }
  }
  return out;
}
