import { describe, expect, it } from 'vitest';
import { decodeValue, encodeValue } from './value-codec.ts';

describe('value codec', () => {
  it('round-trips JSON plus undefined, Date, Map, Set, BigInt and special numbers', () => {
    const value = {
      a: [1, 'x', null, undefined, true],
      d: new Date(1_700_000_000_000),
      m: new Map<unknown, unknown>([
        ['k', { deep: 1n }],
        [2, new Set([1, 2])],
      ]),
      n: [NaN, Infinity, -Infinity, -0],
      u: undefined,
    };
    const back = decodeValue(encodeValue(value)) as typeof value;
    expect(back).toEqual(value);
    expect('u' in back).toBe(true);
    expect(Object.is(back.n[3], -0)).toBe(true);
    expect(back.d).toBeInstanceOf(Date);
  });

  it('keeps an own "$cc" key and never lets "__proto__" reach the prototype', () => {
    const value = JSON.parse('{"$cc":"u","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const back = decodeValue(encodeValue(value)) as Record<string, unknown>;
    expect(Object.keys(back).sort()).toEqual(['$cc', '__proto__']);
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('names the path of a value that cannot cross', () => {
    expect(() => encodeValue({ items: [1, { fn: () => 1 }] }, { root: 'result' })).toThrow(
      /result\.items\[1\]\.fn: a function/,
    );
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => encodeValue(cyclic)).toThrow(/circular/);
    expect(() => encodeValue({ s: Symbol('x') })).toThrow(/value\.s: a symbol/);
  });

  it('round-trips deep nesting on the fast path and caps it on the slow one', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 300; i++) deep = [deep];
    expect(decodeValue(encodeValue(deep))).toEqual(deep);
    // A value that needs the slow path (here: a function at the bottom) is walked with a depth cap.
    let bad: unknown = () => 1;
    for (let i = 0; i < 300; i++) bad = [bad];
    expect(() => encodeValue(bad)).toThrow(/nesting deeper than 200/);
  });

  it('takes the fast path for plain JSON and tags only what needs it', () => {
    expect(encodeValue({ a: [1, 'x'] })).toBe('{"a":[1,"x"]}');
    expect(encodeValue({ d: new Date(0) })).toBe('{"d":{"$cc":"d","v":0}}');
  });
});
