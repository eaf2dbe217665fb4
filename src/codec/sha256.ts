import * as crypto from 'node:crypto';

// One-shot `crypto.hash` (Node >= 20.12) is ~2.5x faster than a Hash object for the short texts journals hash.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

/** Hex SHA-256 of a text: journal checksums, code and manifest hashes, idempotency request hashes. */
export function sha256Hex(text: string): string {
  return oneShot ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex');
}
