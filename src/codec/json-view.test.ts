import { describe, expect, it } from 'vitest';
import { jsonArguments, toJsonView } from './json-view.ts';

describe('values leaving as JSON (ADR 0002)', () => {
  it('renders NaN, Infinity and undefined as JSON.stringify does', () => {
    const value = { n: NaN, i: Infinity, m: -Infinity, z: -0, u: undefined, l: [1, undefined, NaN], ok: 'x' };
    const view = toJsonView(value);
    expect(JSON.stringify(view)).toBe(JSON.stringify(value));
    expect(view).toEqual({ n: null, i: null, m: null, z: 0, l: [1, null, null], ok: 'x' });
    expect(Object.hasOwn(view as object, 'u')).toBe(false);
    expect(toJsonView(undefined)).toBeNull();
    expect(toJsonView(NaN)).toBeNull();
  });

  it('gives what JSON has no form for its documented form', () => {
    const view = toJsonView({
      d: new Date('2020-01-02T03:04:05.678Z'),
      bad: new Date(NaN),
      s: new Set([1, undefined]),
      m: new Map<unknown, unknown>([
        ['a', 1],
        ['gone', undefined],
      ]),
      pairs: new Map([[1, Infinity]]),
      big: 2n ** 70n,
    });
    expect(view).toEqual({
      d: '2020-01-02T03:04:05.678Z',
      bad: null,
      s: [1, null],
      m: { a: 1 },
      pairs: [[1, null]],
      big: '1180591620717411303424',
    });
  });

  it('keeps a __proto__ key a key', () => {
    const view = toJsonView(JSON.parse('{"__proto__":{"polluted":true}}')) as Record<string, unknown>;
    expect(Object.keys(view)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('hands a tool its arguments with NaN, Infinity and undefined as JSON gives them, the rest as they are', () => {
    const when = new Date(0);
    const args = jsonArguments({
      u: undefined,
      n: NaN,
      z: -0,
      l: [undefined, Infinity],
      when,
      big: 5n,
    }) as Record<string, unknown>;
    expect(args).toEqual({ n: null, z: 0, l: [null, null], when, big: 5n });
    expect(Object.hasOwn(args, 'u')).toBe(false);
    expect(Object.is(args.z, 0)).toBe(true);
    expect(args.when).toBe(when);
  });
});
