import { expect } from 'vitest';
import type { SuiteOptions } from './harness.ts';
import { defineGroup } from './harness.ts';
import { containedCases, expectContained, useHostChecks } from './escape-support.ts';

/** Returned values that try to make the host run guest code, hang it, or confuse its deserializer. */
const HOSTILE_RESULTS: Record<string, string> = {
  'a getter': 'return { get x() { return 1; } };',
  'a throwing getter': "return { get x() { throw new Error('trap'); } };",
  'a looping getter': 'return { get x() { while (true) {} } };',
  'a Proxy whose traps throw': `const boom = () => { throw new Error('trap'); };
return new Proxy({}, { get: boom, ownKeys: boom, getOwnPropertyDescriptor: boom, getPrototypeOf: boom, has: boom });`,
  'a Proxy whose traps loop': `const spin = () => { while (true) {} };
return new Proxy({ a: 1 }, { get: spin, ownKeys: spin, getOwnPropertyDescriptor: spin, getPrototypeOf: spin });`,
  'a Proxy array claiming a huge length': `return new Proxy([1, 2], { get: (t, k) => (k === 'length' ? 2 ** 32 - 1 : t[k]) });`,
  'a revoked Proxy': 'const { proxy, revoke } = Proxy.revocable({}, {});\nrevoke();\nreturn proxy;',
  'a Proxy as a nested value':
    "return { ok: 1, inner: new Proxy({}, { ownKeys() { throw new Error('trap'); } }) };",
  toJSON: 'return { a: 1, toJSON() { return { hijacked: true }; } };',
  'a looping toJSON': 'return { a: 1, toJSON() { while (true) {} } };',
  'valueOf and Symbol.toPrimitive':
    'return { valueOf() { return 1; }, [Symbol.toPrimitive]() { return 2; } };',
  'a Date with a poisoned getTime': `const d = new Date(0);
Object.defineProperty(d, 'getTime', { value: () => { while (true) {} } });
Object.defineProperty(d, 'toISOString', { value: () => { throw new Error('trap'); } });
return d;`,
  'a Map with a poisoned iterator': `const m = new Map([[1, 2]]);
m[Symbol.iterator] = function* () { while (true) yield [1, 1]; };
m.entries = m[Symbol.iterator];
m.forEach = () => { while (true) {} };
return m;`,
  'a Map subclass with a throwing size':
    "class Evil extends Map { get size() { throw new Error('trap'); } }\nreturn new Evil([[1, 2]]);",
  'a Set with a poisoned values()':
    'const s = new Set([1]);\ns.values = () => { while (true) {} };\ns[Symbol.iterator] = s.values;\nreturn s;',
  'an object with a huge sparse array': 'const a = [];\na[2 ** 32 - 2] = 1;\nreturn { a };',
  'a promise inside the result': 'return { p: new Promise(() => {}) };',
  'the tools object': 'return tools;',
  'the guest global': 'return globalThis;',
  'the console object': 'return console;',
  'an Error object': "return { e: new TypeError('as a value') };",
  'a typed array and an ArrayBuffer': 'return { u: new Uint8Array([1, 2]), b: new ArrayBuffer(4) };',
  'a WeakMap': 'return new WeakMap();',
  '1e5-deep nested arrays': 'let a = [];\nfor (let i = 0; i < 1e5; i++) a = [a];\nreturn a;',
  '1e5-deep nested objects': 'let o = {};\nfor (let i = 0; i < 1e5; i++) o = { o };\nreturn o;',
  'a huge BigInt': 'return 7n ** 200000n;',
  'keys named like internals':
    "return { __proto__x: 1, constructor: { prototype: { polluted: 1 } }, ['__cc_result']: 1, then: 2 };",
};

/** Thrown values that try the same through the error path. */
const HOSTILE_THROWS: Record<string, string> = {
  'a thrown Proxy': "throw new Proxy(new Error('x'), { get() { throw new Error('trap'); } });",
  'a thrown object with a looping message getter':
    'throw { get message() { while (true) {} }, get name() { return "X"; } };',
  'a thrown Error with a throwing name getter':
    "const e = new Error('m');\nObject.defineProperty(e, 'name', { get() { throw new Error('trap'); } });\nthrow e;",
  'a thrown Error with a poisoned stack':
    "const e = new Error('m');\nObject.defineProperty(e, 'stack', { get() { while (true) {} } });\nthrow e;",
  'a thrown function': 'throw function evil() { return 1; };',
  'a thrown symbol': "throw Symbol('s');",
  'a thrown huge message': "throw new Error('x'.repeat(5e6));",
  'a thrown 1e5-deep object': 'let o = {};\nfor (let i = 0; i < 1e5; i++) o = { o };\nthrow o;',
  'a thrown Error whose code claims a host code':
    "throw Object.assign(new Error('fake'), { code: 'POOL_CLOSED', details: { get x() { while (true) {} } } });",
};

function asPrograms(cases: Record<string, string>): Record<string, { javascript: string }> {
  return Object.fromEntries(Object.entries(cases).map(([k, v]) => [k, { javascript: v }]));
}

export function registerValueEscapes(options: SuiteOptions): void {
  defineGroup(options, 'escape: hostile results and thrown values', (g) => {
    useHostChecks(g);
    containedCases(g, asPrograms(HOSTILE_RESULTS), {
      limits: { timeoutMs: 1_500, memoryBytes: 64 * 1024 * 1024 },
    });
    containedCases(g, asPrograms(HOSTILE_THROWS), {
      limits: { timeoutMs: 1_500, memoryBytes: 64 * 1024 * 1024 },
    });

    g.program(
      'a __proto__ key in the result does not give the host value a polluted prototype',
      { javascript: 'return JSON.parse(\'{"__proto__": {"polluted": true}, "a": 1}\');' },
      async (src) => {
        const { failed, value } = await expectContained(g, src);
        if (failed) return;
        const proto: unknown = Object.getPrototypeOf(value);
        expect(proto === Object.prototype || proto === null).toBe(true);
        expect(
          (value as Record<string, unknown>).polluted === true && !Object.hasOwn(value as object, 'polluted'),
        ).toBe(false);
      },
    );

    g.program(
      'an uncaught plain Error with a code property is still GUEST_ERROR',
      { javascript: "throw Object.assign(new Error('fake'), { code: 'POOL_CLOSED' });" },
      async (src) => {
        const { result } = await expectContained(g, src);
        expect(result.status).toBe('failed');
        if (result.status === 'failed') expect(result.error.code).toBe('GUEST_ERROR');
      },
    );
  });
}
