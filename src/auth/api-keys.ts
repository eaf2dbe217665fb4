import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../codec/index.ts';

/** A new API key: the secret (shown once), its id and the hash that is all the store keeps. */
export function newApiKey(): { key: string; id: string; keyHash: string } {
  const key = `cc_${randomBytes(32).toString('base64url')}`;
  return { key, id: `key_${randomBytes(8).toString('hex')}`, keyHash: hashApiKey(key) };
}

/** Keys are long random strings, so one unsalted SHA-256 is enough (nothing to brute-force). */
export function hashApiKey(key: string): string {
  return sha256Hex(key);
}
