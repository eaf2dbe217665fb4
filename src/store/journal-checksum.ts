import { canonicalJson, sha256Hex } from '../codec/index.ts';

export { canonicalJson, sha256Hex };

/** One link of a task's journal hash chain; `prevChecksum` is '' for seq 1. */
export function journalChecksum(prevChecksum: string, seq: number, type: string, data: unknown): string {
  return journalChecksumOfText(prevChecksum, seq, type, canonicalJson(data));
}

/** `journalChecksum` for data already in canonical JSON (`canonicalJson`'s output), without encoding it again. */
export function journalChecksumOfText(
  prevChecksum: string,
  seq: number,
  type: string,
  canonical: string,
): string {
  return sha256Hex(`${prevChecksum}\n${seq}\n${type}\n${canonical}`);
}
