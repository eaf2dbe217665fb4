import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, journalChecksum, journalChecksumOfText } from './journal-checksum.ts';

describe('journal checksums', () => {
  it('canonical JSON sorts keys recursively and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    );
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
  });

  it('hashes previous checksum, seq, type and canonical data', () => {
    const first = journalChecksum('', 1, 'clock', { b: 2, a: 1 });
    const expected = createHash('sha256').update('\n1\nclock\n{"a":1,"b":2}').digest('hex');
    expect(first).toBe(expected);
    expect(journalChecksum('', 1, 'clock', { a: 1, b: 2 })).toBe(first);
    expect(journalChecksum(first, 2, 'clock', { a: 1, b: 2 })).not.toBe(first);
  });

  it('hashes canonical text like the data it encodes', () => {
    const data = { b: [1, { d: 'x', c: -0 }], a: 'é\u2028' };
    expect(journalChecksumOfText('p', 3, 'clock', canonicalJson(data))).toBe(
      journalChecksum('p', 3, 'clock', data),
    );
    expect(journalChecksumOfText('p', 3, 'clock', '{"a":1}')).not.toBe(
      journalChecksum('p', 3, 'clock', { a: 2 }),
    );
  });
});
