import { createHash } from 'node:crypto';

const ALNUM9 = /^[A-Za-z0-9]{9}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Maps any tool-call id to 9 alphanumeric characters. Valid ids pass through; others are hashed, so an
 * assistant tool call and its tool result map alike, in this request and in every replay of it.
 */
export function toMistralToolCallId(id: string): string {
  if (ALNUM9.test(id)) return id;
  const digest = createHash('sha256').update(id).digest();
  let out = '';
  for (let i = 0; i < 9; i++) out += ALPHABET[(digest[i] ?? 0) % ALPHABET.length];
  return out;
}
