import { expect } from 'vitest';
import { echoTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup } from './harness.ts';
import type { EscapePrograms } from './escape-support.ts';
import { containedCases, escapeProgram, expectContained, useHostChecks } from './escape-support.ts';

const PY_ONLY = 'a Python-only attack';
const NO_PROXY =
  'Python has no Proxy: objects with hooks (__getattr__, properties, to_dict) are the cases that are';

/**
 * Returned values that try to make the host run guest code, hang it, or confuse its deserializer. In Python the
 * codec's hooks (to_dict, tolist, item: what numpy and pandas values offer) and dunder methods stand for getters
 * and toJSON: they run in the sandbox, where hanging or lying ends the program, never the host.
 */
const HOSTILE_RESULTS: Record<string, EscapePrograms> = {
  'a getter': {
    javascript: 'return { get x() { return 1; } };',
    python: 'class A:\n    @property\n    def x(self):\n        return 1\nA()',
  },
  'a throwing getter': {
    javascript: "return { get x() { throw new Error('trap'); } };",
    python: "class A:\n    @property\n    def to_dict(self):\n        raise RuntimeError('trap')\nA()",
  },
  'a looping getter': {
    javascript: 'return { get x() { while (true) {} } };',
    python: 'class A:\n    @property\n    def to_dict(self):\n        while True:\n            pass\nA()',
  },
  'a Proxy whose traps throw': {
    javascript: `const boom = () => { throw new Error('trap'); };
return new Proxy({}, { get: boom, ownKeys: boom, getOwnPropertyDescriptor: boom, getPrototypeOf: boom, has: boom });`,
    // Python's proxy idiom: every attribute made up by __getattr__ / __getattribute__.
    python: "class P:\n    def __getattribute__(self, name):\n        raise RuntimeError('trap')\nP()",
  },
  'a Proxy whose traps loop': {
    javascript: `const spin = () => { while (true) {} };
return new Proxy({ a: 1 }, { get: spin, ownKeys: spin, getOwnPropertyDescriptor: spin, getPrototypeOf: spin });`,
    python: 'class P:\n    def __getattr__(self, name):\n        while True:\n            pass\nP()',
  },
  'a Proxy array claiming a huge length': {
    javascript: `return new Proxy([1, 2], { get: (t, k) => (k === 'length' ? 2 ** 32 - 1 : t[k]) });`,
    python: 'class L(list):\n    def __len__(self):\n        return 2 ** 62\nL([1, 2])',
  },
  'a revoked Proxy': {
    javascript: 'const { proxy, revoke } = Proxy.revocable({}, {});\nrevoke();\nreturn proxy;',
    na: NO_PROXY,
  },
  'a Proxy as a nested value': {
    javascript: "return { ok: 1, inner: new Proxy({}, { ownKeys() { throw new Error('trap'); } }) };",
    python:
      "class P:\n    def __getattr__(self, name):\n        return lambda *a, **k: {'hijacked': True}\n{'ok': 1, 'inner': P()}",
  },
  toJSON: {
    javascript: 'return { a: 1, toJSON() { return { hijacked: true }; } };',
    python: "class A:\n    def to_dict(self):\n        return {'hijacked': True}\n{'a': 1, 'b': A()}",
  },
  'a looping toJSON': {
    javascript: 'return { a: 1, toJSON() { while (true) {} } };',
    python: "class A:\n    def tolist(self):\n        while True:\n            pass\n{'a': 1, 'b': A()}",
  },
  'valueOf and Symbol.toPrimitive': {
    javascript: 'return { valueOf() { return 1; }, [Symbol.toPrimitive]() { return 2; } };',
    // int and float subclasses whose conversions lie or fail: the codec sees the number itself.
    python: `class N(int):
    def __repr__(self):
        raise RuntimeError('trap')
    def __index__(self):
        while True:
            pass
class F(float):
    def __repr__(self):
        return 'hijacked'
{'n': N(5), 'f': F(1.5), 'o': type('O', (), {'__int__': lambda self: 1, '__float__': lambda self: 2.0})()}`,
  },
  'a Date with a poisoned getTime': {
    javascript: `const d = new Date(0);
Object.defineProperty(d, 'getTime', { value: () => { while (true) {} } });
Object.defineProperty(d, 'toISOString', { value: () => { throw new Error('trap'); } });
return d;`,
    python: `import datetime
class Z(datetime.tzinfo):
    def utcoffset(self, dt):
        while True:
            pass
class D(datetime.datetime):
    def timestamp(self):
        raise RuntimeError('trap')
{'d': D(2020, 1, 1), 'z': datetime.datetime(2020, 1, 1, tzinfo=Z())}`,
  },
  'a Map with a poisoned iterator': {
    javascript: `const m = new Map([[1, 2]]);
m[Symbol.iterator] = function* () { while (true) yield [1, 1]; };
m.entries = m[Symbol.iterator];
m.forEach = () => { while (true) {} };
return m;`,
    python: `class M(dict):
    def items(self):
        while True:
            yield ('k', 1)
M({1: 2})`,
  },
  'a Map subclass with a throwing size': {
    javascript:
      "class Evil extends Map { get size() { throw new Error('trap'); } }\nreturn new Evil([[1, 2]]);",
    python: `class Evil(dict):
    def __len__(self):
        raise RuntimeError('trap')
    def __iter__(self):
        raise RuntimeError('trap')
Evil({1: 2})`,
  },
  'a Set with a poisoned values()': {
    javascript:
      'const s = new Set([1]);\ns.values = () => { while (true) {} };\ns[Symbol.iterator] = s.values;\nreturn s;',
    python: 'class S(set):\n    def __iter__(self):\n        while True:\n            yield 1\nS([1])',
  },
  'an object with a huge sparse array': {
    javascript: 'const a = [];\na[2 ** 32 - 2] = 1;\nreturn { a };',
    // Python lists are dense; the nearest is a lazy sequence claiming a huge size.
    python: "{'a': range(2 ** 62), 'b': [None] * 10 ** 6}",
  },
  'a promise inside the result': {
    javascript: 'return { p: new Promise(() => {}) };',
    python: `import asyncio
async def never():
    await asyncio.Event().wait()
{'p': never(), 'f': asyncio.Future()}`,
  },
  'the tools object': { javascript: 'return tools;', python: 'tools' },
  'the guest global': { javascript: 'return globalThis;', python: 'globals()' },
  'the console object': {
    javascript: 'return console;',
    python: "import sys\n{'out': sys.stdout, 'print': print}",
  },
  'an Error object': {
    javascript: "return { e: new TypeError('as a value') };",
    python: "{'e': TypeError('as a value')}",
  },
  'a typed array and an ArrayBuffer': {
    javascript: 'return { u: new Uint8Array([1, 2]), b: new ArrayBuffer(4) };',
    python: "{'u': bytearray(b'\\x01\\x02'), 'm': memoryview(b'abcd'), 'b': b'raw'}",
  },
  'a WeakMap': { javascript: 'return new WeakMap();', python: 'import weakref\nweakref.WeakKeyDictionary()' },
  '1e5-deep nested arrays': {
    javascript: 'let a = [];\nfor (let i = 0; i < 1e5; i++) a = [a];\nreturn a;',
    python: 'a = []\nfor i in range(10 ** 5):\n    a = [a]\na',
  },
  '1e5-deep nested objects': {
    javascript: 'let o = {};\nfor (let i = 0; i < 1e5; i++) o = { o };\nreturn o;',
    python: "o = {}\nfor i in range(10 ** 5):\n    o = {'o': o}\no",
  },
  'a huge BigInt': { javascript: 'return 7n ** 200000n;', python: '7 ** 200000' },
  'keys named like internals': {
    javascript:
      "return { __proto__x: 1, constructor: { prototype: { polluted: 1 } }, ['__cc_result']: 1, then: 2 };",
    python:
      "{'__proto__x': 1, 'constructor': {'prototype': {'polluted': 1}}, '__cc_result': 1, 'then': 2, '__cc_value__': 3}",
  },
  // Python's own: what the codec does with its own tag, and the interpreter's exits.
  'a lone surrogate in the result': { python: "'\\ud800' + 'x'", na: PY_ONLY },
  'generators, modules, frames and classes': {
    python: 'import sys\n[(x for x in ()), sys, sys._getframe(), type, object(), ...]',
    na: PY_ONLY,
  },
};

/** Thrown values that try the same through the error path. */
const HOSTILE_THROWS: Record<string, EscapePrograms> = {
  'a thrown Proxy': {
    javascript: "throw new Proxy(new Error('x'), { get() { throw new Error('trap'); } });",
    python:
      "class E(Exception):\n    def __getattribute__(self, name):\n        raise RuntimeError('trap')\nraise E('x')",
  },
  'a thrown object with a looping message getter': {
    javascript: 'throw { get message() { while (true) {} }, get name() { return "X"; } };',
    python: 'class E(Exception):\n    def __str__(self):\n        while True:\n            pass\nraise E()',
  },
  'a thrown Error with a throwing name getter': {
    javascript:
      "const e = new Error('m');\nObject.defineProperty(e, 'name', { get() { throw new Error('trap'); } });\nthrow e;",
    python: `class M(type):
    @property
    def __name__(cls):
        raise RuntimeError('trap')
class E(Exception, metaclass=M):
    @property
    def __class__(self):
        raise RuntimeError('trap')
raise E('m')`,
  },
  'a thrown Error with a poisoned stack': {
    javascript:
      "const e = new Error('m');\nObject.defineProperty(e, 'stack', { get() { while (true) {} } });\nthrow e;",
    python:
      "class E(Exception):\n    @property\n    def __traceback__(self):\n        raise RuntimeError('trap')\nraise E('m')",
  },
  'a thrown function': { javascript: 'throw function evil() { return 1; };', python: 'raise (lambda: 1)' },
  'a thrown symbol': {
    javascript: "throw Symbol('s');",
    na: 'Python has no symbols (only exceptions can be raised)',
  },
  'a thrown huge message': {
    javascript: "throw new Error('x'.repeat(5e6));",
    python: "raise Exception('x' * 5_000_000)",
  },
  'a thrown 1e5-deep object': {
    javascript: 'let o = {};\nfor (let i = 0; i < 1e5; i++) o = { o };\nthrow o;',
    python: "o = {}\nfor i in range(10 ** 5):\n    o = {'o': o}\nraise Exception(o)",
  },
  'a thrown Error whose code claims a host code': {
    javascript:
      "throw Object.assign(new Error('fake'), { code: 'POOL_CLOSED', details: { get x() { while (true) {} } } });",
    python: `class E(Exception):
    code = 'POOL_CLOSED'
    @property
    def details(self):
        while True:
            pass
raise E('fake')`,
  },
  // Python's own exits: each must end as a clean failure, the host deciding what it was.
  'SystemExit, KeyboardInterrupt and GeneratorExit': {
    python: "import sys\ntry:\n    raise KeyboardInterrupt()\nfinally:\n    sys.exit('bye')",
    na: PY_ONLY,
  },
  'os._exit(0) before the result': { python: 'import os\nos._exit(0)', na: PY_ONLY },
  'raising a class whose constructor raises': {
    python: "class E(Exception):\n    def __init__(self):\n        raise RuntimeError('trap')\nraise E",
    na: PY_ONLY,
  },
  'a forged non-JSON line on the protocol fd': {
    python: "import os\nos.write(3, b'not json\\n')\nimport select\nselect.select([], [], [], 5)",
    na: PY_ONLY,
  },
  'a forged message of an unknown type on the protocol fd': {
    python: 'import os\nos.write(3, b\'{"t":"evil"}\\n\')\nimport select\nselect.select([], [], [], 5)',
    na: PY_ONLY,
  },
  'the protocol fds closed': { python: 'import os\nos.close(3)\nos.close(4)\n1', na: PY_ONLY },
};

export function registerValueEscapes(options: SuiteOptions): void {
  defineGroup(options, 'escape: hostile results and thrown values', (g) => {
    useHostChecks(g);
    // With a tool bound, so that `tools` holds a live tool function ('the tools object').
    containedCases(g, HOSTILE_RESULTS, {
      limits: { timeoutMs: 1_500, memoryBytes: 64 * 1024 * 1024 },
      tools: () => [echoTool()],
    });
    containedCases(g, HOSTILE_THROWS, {
      limits: { timeoutMs: 1_500, memoryBytes: 64 * 1024 * 1024 },
    });

    escapeProgram(
      g,
      'a __proto__ key in the result does not give the host value a polluted prototype',
      {
        javascript: 'return JSON.parse(\'{"__proto__": {"polluted": true}, "a": 1}\');',
        python: "{'__proto__': {'polluted': True}, 'a': 1}",
      },
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

    escapeProgram(
      g,
      'an uncaught plain Error with a code property is still GUEST_ERROR',
      {
        javascript: "throw Object.assign(new Error('fake'), { code: 'POOL_CLOSED' });",
        python: "e = Exception('fake')\ne.code = 'POOL_CLOSED'\nraise e",
      },
      async (src) => {
        const { result } = await expectContained(g, src);
        expect(result.status).toBe('failed');
        if (result.status === 'failed') expect(result.error.code).toBe('GUEST_ERROR');
      },
    );

    escapeProgram(
      g,
      'values shaped like the codec\u2019s tags come back as the program made them',
      {
        javascript: "return { $cc: 'd', v: 0, n: { $cc: 'u' }, l: [{ $cc: 'b', v: '1' }] };",
        python: "{'$cc': 'd', 'v': 0, 'n': {'$cc': 'u'}, 'l': [{'$cc': 'b', 'v': '1'}]}",
      },
      async (src) => {
        const { failed, value } = await expectContained(g, src);
        expect(failed).toBe(false);
        expect(value).toEqual({ $cc: 'd', v: 0, n: { $cc: 'u' }, l: [{ $cc: 'b', v: '1' }] });
      },
    );
  });
}
