import { checkBodyRange } from '../spec/index.ts';

/** Which stored rows a ranged read of a body covers, and where in them the range lies. */
export interface RowSpan {
  /** First and last row numbers (inclusive); `last < first` when the range is empty. */
  readonly first: number;
  readonly last: number;
  /** Where the range starts in the first row. */
  readonly skip: number;
  /** Bytes of the range (0 at or past the end). */
  readonly length: number;
}

export function rowSpan(size: number, chunkBytes: number, offset: number, length: number): RowSpan {
  checkBodyRange(offset, length);
  const end = Math.min(size, offset + length);
  if (end <= offset) return { first: 0, last: -1, skip: 0, length: 0 };
  const first = Math.floor(offset / chunkBytes);
  return {
    first,
    last: Math.floor((end - 1) / chunkBytes),
    skip: offset - first * chunkBytes,
    length: end - offset,
  };
}

/** The range's bytes from its rows (in order). */
export function sliceRows(rows: readonly Uint8Array[], span: RowSpan): Uint8Array {
  if (span.length === 0) return new Uint8Array(0);
  const joined = Buffer.concat(rows);
  return new Uint8Array(joined.subarray(span.skip, span.skip + span.length));
}
