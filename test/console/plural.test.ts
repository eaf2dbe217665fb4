import { describe, expect, it } from 'vitest';
import { noun, plural } from '../../console/src/plural.ts';

// The console's one plural helper: every count it shows goes through it.

describe('the console plural helper', () => {
  it('says one thing in the singular and any other count in the plural', () => {
    expect(plural(1, 'approval')).toBe('1 approval');
    expect(plural(2, 'approval')).toBe('2 approvals');
    expect(plural(0, 'approval')).toBe('0 approvals');
    expect(plural(1, 'tool call')).toBe('1 tool call');
    expect(plural(3, 'entry', 'entries')).toBe('3 entries');
    expect(noun(1, 'call')).toBe('call');
    expect(noun(7, 'call')).toBe('calls');
  });
});
