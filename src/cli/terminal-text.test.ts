import { describe, expect, it } from 'vitest';
import { safeText, terminalIo } from './terminal-text.ts';

describe('safeText', () => {
  it.each([
    ['\u001b[31mred', '\\x1b[31mred'],
    ['\u001b]8;;http://x\u0007link', '\\x1b]8;;http://x\\x07link'],
    ['a\bb\rc\u0000d', 'a\\x08b\\x0dc\\x00d'],
    ['\u009b1m\u0085', '\\x9b1m\\x85'],
    ['\u202eabc\u2066\u2069\u200f', '\\u202eabc\\u2066\\u2069\\u200f'],
    ['del\u007f', 'del\\x7f'],
  ])('shows %j as %j', (text, shown) => {
    expect(safeText(text)).toBe(shown);
  });

  it('keeps text, tabs, newlines and other Unicode as they are', () => {
    const text = 'plain\ttabbed\nnext line: héllo 東京 🙂 \\x1b stays literal';
    expect(safeText(text)).toBe(text);
  });

  it('leaves stdout exact while it carries JSON, and stderr never', () => {
    const seen = { stdout: '', stderr: '' };
    let json = true;
    const io = terminalIo(
      { stdout: (t) => (seen.stdout += t), stderr: (t) => (seen.stderr += t) },
      () => json,
    );
    io.stdout('\u001b[0m');
    io.stderr('\u001b[0m');
    json = false;
    io.stdout('\u001b[0m');
    expect(seen).toEqual({ stdout: '\u001b[0m\\x1b[0m', stderr: '\\x1b[0m' });
  });
});
