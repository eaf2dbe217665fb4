import { expect } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import type { ToolDefinition } from '../../src/spec/index.ts';
import { defineTool } from '../../src/tools/index.ts';
import { echoTool, newToolLog, valueTool, weatherTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectSucceeded } from './harness.ts';
import type { EscapePrograms } from './escape-support.ts';
import { escapeProgram, expectContained, expectPlainData, useHostChecks } from './escape-support.ts';

const PY_ONLY = 'a Python-only attack';

/**
 * Tool arguments the guest may try to smuggle a live object or a trap through. JavaScript gives an expression;
 * Python a snippet that sets ARG (the codec's hooks, to_dict / tolist / item, and dunder methods are its traps).
 */
const HOSTILE_ARGS: Record<string, EscapePrograms> = {
  'a Proxy': {
    javascript: "new Proxy({ a: 1 }, { get: (t, k) => (k === 'a' ? 2 : t[k]) })",
    // Python's proxy idiom: every attribute made up, the codec's hooks included.
    python:
      "class P:\n    def __getattr__(self, k):\n        return lambda *a, **kw: {'a': 2}\nARG = {'p': P()}",
  },
  'a Proxy with throwing traps': {
    javascript:
      "new Proxy({}, { ownKeys() { throw new Error('trap'); }, get() { throw new Error('trap'); } })",
    python:
      "class P:\n    def __getattribute__(self, k):\n        raise RuntimeError('trap')\nARG = {'p': P()}",
  },
  'a Proxy with looping traps': {
    javascript: 'new Proxy({ a: 1 }, { ownKeys() { while (true) {} } })',
    python:
      "class P:\n    def __getattr__(self, k):\n        while True:\n            pass\nARG = {'p': P()}",
  },
  'a getter': {
    javascript: '{ get a() { return 5; } }',
    python: "class A:\n    @property\n    def a(self):\n        return 5\nARG = {'o': A()}",
  },
  'a throwing getter': {
    javascript: "{ get a() { throw new Error('trap'); } }",
    python:
      "class A:\n    @property\n    def to_dict(self):\n        raise RuntimeError('trap')\nARG = {'o': A()}",
  },
  'a looping getter': {
    javascript: '{ get a() { while (true) {} } }',
    python:
      "class A:\n    @property\n    def tolist(self):\n        while True:\n            pass\nARG = {'o': A()}",
  },
  'a function': { javascript: '{ f() { return 1; }, a: 1 }', python: "ARG = {'f': lambda: 1, 'a': 1}" },
  'a cycle': {
    javascript: '(() => { const o = { a: 1 }; o.self = o; return o; })()',
    python: "ARG = {'a': 1}\nARG['self'] = ARG",
  },
  'a __proto__ key': {
    javascript: 'JSON.parse(\'{"__proto__": {"polluted": true}, "a": 1}\')',
    python:
      "ARG = {'__proto__': {'polluted': True}, 'constructor': {'prototype': {'polluted': True}}, 'a': 1}",
  },
  'a symbol': { javascript: "{ s: Symbol('x') }", python: "ARG = {'s': object(), 't': Ellipsis}" },
  toJSON: {
    javascript: '{ a: 1, toJSON() { return { hijacked: true }; } }',
    python: "class A:\n    def to_dict(self):\n        return {'hijacked': True}\nARG = {'a': 1, 'b': A()}",
  },
  'a 1e5-deep object': {
    javascript: '(() => { let o = {}; for (let i = 0; i < 1e5; i++) o = { o }; return o; })()',
    python: "ARG = {}\nfor i in range(10 ** 5):\n    ARG = {'o': ARG}",
  },
  'a Date with poisoned methods': {
    javascript:
      '(() => { const d = new Date(0); d.toISOString = () => { while (true) {} }; d.getTime = d.toISOString; return { d }; })()',
    python: `import datetime
class D(datetime.datetime):
    def timestamp(self):
        while True:
            pass
ARG = {'d': D(2020, 1, 1)}`,
  },
  'an array with a poisoned iterator': {
    javascript:
      '(() => { const a = [1, 2]; a[Symbol.iterator] = function* () { while (true) yield 1; }; return { a }; })()',
    python:
      "class L(list):\n    def __iter__(self):\n        while True:\n            yield 1\nARG = {'a': L([1, 2])}",
  },
  'a huge integer': { python: "ARG = {'n': 7 ** 200000}", na: PY_ONLY },
  'values shaped like the codec\u2019s tags': {
    javascript: "{ $cc: 'd', v: 0, n: { $cc: 'u' } }",
    python: "ARG = {'$cc': 'd', 'v': 0, 'n': {'$cc': 'u'}}",
  },
};

/** The program that makes the call, per language. */
function hostileArgProgram(language: 'javascript' | 'python', args: string): string {
  if (language === 'javascript') {
    return `let outcome;
try { await tools.echo(${args}); outcome = 'called'; } catch (e) { outcome = String(e && e.code); }
return outcome;`;
  }
  return `${args}
try:
    tools.echo(ARG)
    outcome = 'called'
except BaseException as e:
    outcome = type(e).__name__
outcome`;
}

const RESERVED = [
  '__proto__',
  'constructor',
  'hasOwnProperty',
  'toString',
  'valueOf',
  'prototype',
  '__defineGetter__',
];

// Results are keyed 'n:<name>' so that '__proto__' is an ordinary key.
const CALL_RESERVED_JS = `const out = {};
for (const n of ${JSON.stringify([...RESERVED, 'then'])}) {
  try { const r = await tools[n].call(tools, { city: 'x' }); out['n:' + n] = 'returned ' + typeof r; }
  catch (e) { out['n:' + n] = String(e && e.code); }
}
out.awaitTools = await Promise.race([
  Promise.resolve(tools).then(() => 'settled', () => 'rejected'),
  new Promise((r) => setTimeout(() => r('pending'), 100)),
]);
out.weather = (await tools.get_weather({ city: 'Paris' })).city;
return out;`;

/** Python's object protocol on the namespace: attributes, not tools (the runner binds no dunder name). */
const PY_PROTOCOL = ['__class__', '__init__', '__getattr__', '__dict__', '__reduce__', '__setattr__'];

const CALL_RESERVED_PY = `out = {}
for n in ${JSON.stringify([...RESERVED, 'then', ...PY_PROTOCOL])}:
    try:
        r = getattr(tools, n)({'city': 'x'})
        out['n:' + n] = 'returned ' + type(r).__name__
    except ToolError as e:
        out['n:' + n] = e.code
    except Exception as e:
        out['n:' + n] = type(e).__name__
try:
    out['awaitTools'] = 'settled' if __import__('asyncio').iscoroutine(tools) else 'not awaitable'
except Exception as e:
    out['awaitTools'] = type(e).__name__
out['weather'] = tools.get_weather(city='Paris')['city']
out`;

function rawTool(name: string): ToolDefinition {
  return {
    namespace: 'tools',
    name,
    description: 'bypasses defineTool',
    inputSchema: {},
    effect: 'read',
    requiresApproval: false,
    execute: () => `raw ${name}`,
  };
}

export function registerToolEscapes(options: SuiteOptions): void {
  defineGroup(options, 'escape: tool boundary', (g) => {
    useHostChecks(g);

    for (const [name, args] of Object.entries(HOSTILE_ARGS)) {
      escapeProgram(
        g,
        `tool arguments with ${name} reach the tool as plain data`,
        {
          ...(args.javascript ? { javascript: hostileArgProgram('javascript', args.javascript) } : {}),
          ...(args.python ? { python: hostileArgProgram('python', args.python) } : {}),
          ...(args.na ? { na: args.na } : {}),
        },
        async (src) => {
          const log = newToolLog();
          await expectContained(g, src, { tools: [echoTool(log)], limits: { timeoutMs: 1_500 } });
          for (const received of log.args) {
            expectPlainData(received);
            const proto: unknown = Object.getPrototypeOf(received);
            expect(proto === Object.prototype || proto === null).toBe(true);
          }
          // The codec's own tag, written by the program, is data: it reaches the tool exactly as written.
          if (name.startsWith('values shaped like')) {
            expect(log.args).toEqual([{ $cc: 'd', v: 0, n: { $cc: 'u' } }]);
          }
        },
      );
    }

    escapeProgram(
      g,
      'a tool call forged on the protocol fd reaches the tool as plain data',
      {
        // The program writes the bridge's own message: the host checks it like any other call.
        python: `import os, select
args = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"a":1}'
os.write(3, (__import__('json').dumps({'t': 'call', 'id': 'call-1', 'ns': 'tools', 'name': 'echo', 'args': args}) + '\\n').encode())
select.select([4], [], [], 5)
'sent'`,
        na: PY_ONLY,
      },
      async (src) => {
        const log = newToolLog();
        await expectContained(g, src, { tools: [echoTool(log)], limits: { timeoutMs: 1_500 } });
        expect(log.args).toHaveLength(1);
        for (const received of log.args) {
          expectPlainData(received);
          expect(Object.getPrototypeOf(received)).toBe(Object.prototype);
        }
      },
    );

    g.test('defineTool refuses the names __proto__, constructor and hasOwnProperty', async () => {
      for (const name of ['__proto__', 'constructor', 'hasOwnProperty']) {
        let thrown: unknown;
        try {
          defineTool({ name, description: 'x', execute: () => 1 });
        } catch (e) {
          thrown = e;
        }
        expect(thrown).toBeInstanceOf(CodecallError);
        expect((thrown as CodecallError).code).toBe('INVALID_ARGUMENT');
      }
      await Promise.resolve();
    });

    g.program(
      'tools.__proto__ / constructor / hasOwnProperty / ... are not tools',
      { javascript: CALL_RESERVED_JS, python: CALL_RESERVED_PY },
      async (src) => {
        const log = newToolLog();
        const value = expectSucceeded(await g.run(src, { tools: [weatherTool(log)] })) as Record<
          string,
          string
        >;
        for (const n of RESERVED) {
          // Python: a dunder name is the object protocol's (AttributeError), every other name is a tool's.
          const expected = g.language === 'python' && n.startsWith('__') ? 'AttributeError' : 'NO_SUCH_TOOL';
          expect(`${n}: ${value[`n:${n}`]}`).toBe(`${n}: ${expected}`);
        }
        expect(['NO_SUCH_TOOL', 'undefined']).toContain(value['n:then']);
        if (g.language === 'python') {
          // The namespace's own attributes may be reached; none of them calls the host.
          for (const n of PY_PROTOCOL) expect(`${n}: ${value[`n:${n}`]}`).not.toBe(`${n}: called`);
        }
        expect(value.weather).toBe('Paris');
        expect(log.args).toEqual([{ city: 'Paris' }]);
      },
    );

    g.program(
      'tool definitions named __proto__ / constructor / hasOwnProperty (bypassing defineTool) stay contained',
      {
        python: `out = {}
for n in ['__proto__', 'constructor', 'hasOwnProperty', '__class__', '__dict__', '__getattr__', '__init__']:
    try:
        out['n:' + n] = str(getattr(tools, n)({}))
    except BaseException as e:
        out['n:' + n] = type(e).__name__
out['proto'] = type({}) is dict and {}.__class__ is dict
out['has'] = 'a' in {'a': 1}
out['weather'] = tools.get_weather(city='Rome')['city']
out`,
        javascript: `const out = {};
for (const n of ['__proto__', 'constructor', 'hasOwnProperty']) {
  try { out['n:' + n] = String(await tools[n]({})); } catch (e) { out['n:' + n] = String(e && e.code); }
}
out.proto = Object.getPrototypeOf({}) === Object.prototype;
out.has = ({ a: 1 }).hasOwnProperty('a');
out.weather = (await tools.get_weather({ city: 'Rome' })).city;
return out;`,
      },
      async (src) => {
        const tools = [
          weatherTool(),
          rawTool('__proto__'),
          rawTool('constructor'),
          rawTool('hasOwnProperty'),
          // Python's protocol names: binding them used to break the runner before the program ran.
          ...(g.language === 'python'
            ? ['__class__', '__dict__', '__getattr__', '__init__'].map(rawTool)
            : []),
        ];
        const { failed, value } = await expectContained(g, src, { tools });
        if (!failed) expect(value).toMatchObject({ proto: true, has: true, weather: 'Rome' });
        if (g.language === 'python') expect(value).toMatchObject({ 'n:constructor': 'raw constructor' });
      },
    );

    const hostile: Record<string, () => unknown> = {
      'a Proxy whose traps throw': () =>
        new Proxy(
          {},
          {
            ownKeys: () => {
              throw new Error('host trap');
            },
            get: () => {
              throw new Error('host trap');
            },
          },
        ),
      'a cycle': () => {
        const o: Record<string, unknown> = { a: 1 };
        o.self = o;
        return o;
      },
      'a throwing getter': () => ({
        get x(): never {
          throw new Error('host getter');
        },
      }),
      'a class instance with methods': () =>
        new (class Thing {
          x = 1;
          method(): number {
            return 2;
          }
        })(),
      'process.kill': () => ({ env: { A: '1' }, kill: process.kill.bind(process) }),
      'a Buffer': () => Buffer.from('abc'),
    };
    for (const [name, produce] of Object.entries(hostile)) {
      g.program(
        `a tool returning ${name} gives the guest data or a catchable error, never a live host object`,
        {
          python: `try:
    r = tools.hostile()
    d = r if isinstance(r, dict) else {}
    kind = lambda v: 'function' if callable(v) else type(v).__name__
    out = {'proto': isinstance(r, dict), 'kill': kind(d.get('kill')), 'method': kind(d.get('method')), 'x': d.get('x')}
except ToolError as e:
    out = {'caught': e.code, 'isToolError': isinstance(e, ToolError)}
out`,
          javascript: `try {
  const r = await tools.hostile({});
  return { proto: Object.getPrototypeOf(r) === Object.prototype, kill: typeof (r && r.kill), method: typeof (r && r.method), x: r && r.x };
} catch (e) { return { caught: String(e && e.code), isToolError: e instanceof ToolError }; }`,
        },
        async (src) => {
          const { failed, value } = await expectContained(g, src, { tools: [valueTool('hostile', produce)] });
          if (failed) return;
          expect(value).not.toMatchObject({ kill: 'function' });
          expect(value).not.toMatchObject({ method: 'function' });
          if (name === 'process.kill')
            expect(value).toEqual({ caught: 'TOOL_RESULT_INVALID', isToolError: true });
        },
      );
    }
  });
}
