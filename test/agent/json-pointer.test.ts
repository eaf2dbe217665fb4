import { describe, expect, it } from 'vitest';
import { resolvePointer } from '../../src/agent/json-pointer.ts';

describe('resolvePointer', () => {
  const root = {
    $defs: { city: { type: 'string' }, 'a/b~c': { enum: ['x'] }, 'sp ace': { type: 'null' } },
    prefixItems: [{ type: 'number' }, { type: 'boolean' }],
  };

  it('resolves #, own names (with ~1, ~0 and percent escapes) and array indexes', () => {
    expect(resolvePointer(root, '#')).toBe(root);
    expect(resolvePointer(root, '#/$defs/city')).toEqual({ type: 'string' });
    expect(resolvePointer(root, '#/$defs/a~1b~0c')).toEqual({ enum: ['x'] });
    expect(resolvePointer(root, '#/$defs/sp%20ace')).toEqual({ type: 'null' });
    expect(resolvePointer(root, '#/prefixItems/1')).toEqual({ type: 'boolean' });
  });

  it('resolves nothing else: missing names, remote refs, bad escapes', () => {
    expect(resolvePointer(root, '#/$defs/missing')).toBeUndefined();
    expect(resolvePointer(root, 'https://example.com/s.json')).toBeUndefined();
    expect(resolvePointer(root, 'other.json#/$defs/city')).toBeUndefined();
    expect(resolvePointer(root, '#/$defs/%E0%A4%A')).toBeUndefined();
    expect(resolvePointer(root, '#/prefixItems/5')).toBeUndefined();
  });

  it('does not resolve the prototype or inherited names', () => {
    expect(resolvePointer(root, '#/__proto__')).toBeUndefined();
    expect(resolvePointer(root, '#/$defs/__proto__')).toBeUndefined();
    expect(resolvePointer(root, '#/$defs/constructor')).toBeUndefined();
    expect(resolvePointer(root, '#/$defs/toString')).toBeUndefined();
    expect(resolvePointer(root, '#/prefixItems/length')).toBeUndefined();
    const inherits = { $defs: Object.create({ city: { type: 'string' } }) as Record<string, unknown> };
    expect(resolvePointer(inherits, '#/$defs/city')).toBeUndefined();
  });
});
