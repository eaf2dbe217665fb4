import * as crypto from 'node:crypto';
import { canonicalJson } from '../codec/index.ts';

export { canonicalJson };

// One-shot `crypto.hash` (Node >= 20.12) is ~2.5x faster than a Hash object for the short texts journals hash.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

export function sha256Hex(text: string): string {
  return oneShot ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex');
}

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
