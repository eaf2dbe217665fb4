import { expect } from 'vitest';
import { boomTool, weatherTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectSucceeded } from './harness.ts';
import {
  escapeProgram,
  expectContained,
  jsPayload,
  notApplicable,
  pyPayload,
  sandboxRoot,
  useHostChecks,
} from './escape-support.ts';

/** Expressions a guest may try to turn into the host's `process`. */
const CONSTRUCTOR_CHAINS: Record<string, string> = {
  'this.constructor.constructor': 'this.constructor.constructor("return process")()',
  '(() => {}).constructor': '(() => {}).constructor("return process")()',
  '(async () => {}).constructor': 'await (async () => {}).constructor("return process")()',
  '(function* () {}).constructor': '(function* () {}).constructor("yield process")().next().value',
  'Object.getPrototypeOf(async function () {}).constructor':
    'await Object.getPrototypeOf(async function () {}).constructor("return process")()',
  'tools.constructor.constructor': 'tools.constructor.constructor("return process")()',
  'tools.<tool>.constructor': 'tools.get_weather.constructor("return process")()',
  'console.log.constructor': 'console.log.constructor("return process")()',
  'setTimeout.constructor': 'setTimeout.constructor("return process")()',
  'setInterval.constructor': 'setInterval.constructor("return process")()',
  'URL.constructor': 'URL.constructor("return process")()',
  'a URL .searchParams iterator .constructor.constructor':
    'new URL("http://a/?b=1").searchParams.entries().constructor.constructor("return process")()',
  'TextEncoder().encode() .constructor.constructor':
    'new TextEncoder().encode("x").constructor.constructor("return process")()',
  'crypto.getRandomValues.constructor': 'crypto.getRandomValues.constructor("return process")()',
  'structuredClone(...) .constructor.constructor':
    'structuredClone({ a: new Map() }).a.constructor.constructor("return process")()',
  'ToolError.constructor': 'ToolError.constructor("return process")()',
  'a tool error .constructor.constructor':
    '(await tools.boom({}).catch((e) => e)).constructor.constructor("return process")()',
  'a tool result .constructor.constructor':
    "(await tools.get_weather({ city: 'Paris' })).constructor.constructor('return process')()",
  'a tool promise .constructor.constructor':
    "tools.get_weather({ city: 'Paris' }).constructor.constructor('return process')()",
  'Function("return this")().process': 'Function("return this")().process',
  'eval("process")': 'eval("typeof process === \'undefined\' ? undefined : process")',
  'indirect eval of globalThis': '(0, eval)("this").process',
  'Reflect.construct(Function)': 'Reflect.construct(Function, ["return process"])()',
};

/** Chains through Python's object graph to `os` (reaching it is allowed; leaving the sandbox with it is not). */
const PY_CHAINS: Record<string, { expr: string; setup?: string }> = {
  '().__class__.__base__.__subclasses__()': {
    expr: "next(c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close').__init__.__globals__['sys'].modules['os']",
  },
  'tools.<tool>.__globals__': { expr: "tools.get_weather.__globals__['os']" },
  'tools.__class__.__getattr__.__globals__': { expr: "tools.__class__.__getattr__.__globals__['os']" },
  'final_answer.__globals__': { expr: "final_answer.__globals__['os']" },
  'ToolError.__init__.__globals__': { expr: "ToolError.__init__.__globals__['os']" },
  "a tool error's traceback frames": {
    setup: `def _from_traceback():
    try:
        tools.boom()
    except ToolError as e:
        tb = e.__traceback__
        while tb.tb_next:
            tb = tb.tb_next
        return tb.tb_frame.f_globals['os']`,
    expr: '_from_traceback()',
  },
  'a tool result .__class__.__base__.__subclasses__()': {
    expr: "next(c for c in tools.get_weather(city='Paris').__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close').__init__.__globals__['sys'].modules['os']",
  },
  "a tool coroutine's frame (tools.<tool>_async)": {
    expr: "tools.get_weather_async(city='Paris').cr_frame.f_globals['os']",
  },
  'print.__self__.__import__': { expr: "print.__self__.__import__('os')" },
  "__builtins__['__import__']": { expr: "__builtins__['__import__']('os')" },
  'eval("__import__(\'os\')")': { expr: 'eval("__import__(\'os\')")' },
  "the stdout object's methods": { expr: "type(__import__('sys').stdout).write.__globals__['os']" },
  "the runner's frame (sys._getframe)": { expr: "__import__('sys')._getframe(2).f_globals['os']" },
  'gc.get_objects()': {
    expr: "next(o for o in __import__('gc').get_objects() if isinstance(o, dict) and '_send' in o)['os']",
  },
  "importlib.import_module('posix')": { expr: "__import__('importlib').import_module('posix')" },
};

/** The program's global names: the tools' namespaces, final_answer and the tool errors, nothing of the runner. */
const PY_GLOBAL_NAMES = [
  'InputTimeoutError',
  'NoSuchToolError',
  'ToolError',
  'ToolRejectedError',
  'ToolValidationError',
  // Code Mode's name for the tools namespace (the same object as tools).
  'codemode',
  'final_answer',
  'tools',
];
/** The runner's names: none may be a global of the program (they are reachable, by design, through the graph). */
const PY_FORBIDDEN = [
  '_send',
  '_out',
  '_in',
  '_recv',
  '_main',
  '_encode',
  'os',
  'sys',
  'json',
  'builtins',
  'resource',
];

const LIST_GLOBALS_PY = `names = sorted(globals())
import builtins as _b
def _report():
    standard = set(dir(_b))
    unknown = [n for n in names if n not in standard and not (n.startswith('__') and n.endswith('__'))]
    probes = {}
    def poke(fn, label):
        for args in [(), ('os',), ({},), (None, None), (-1,), ('__class__', {'polluted': 1})]:
            try:
                fn(*args)
            except BaseException:
                pass
    for n in unknown:
        v = globals()[n]
        probes[n] = type(v).__name__
        if callable(v):
            poke(v, n)
        for k in list(getattr(v, '__dict__', {})):
            attr = getattr(v, k, None)
            if callable(attr):
                poke(attr, n + '.' + k)
    return {'names': names, 'unknown': unknown, 'probes': probes, 'builtins': type(__builtins__).__name__}
_report()`;

/** ECMAScript globals plus what codecall documents; anything else on the guest global is probed. */
const STANDARD_GLOBALS = new Set(
  (
    'globalThis Infinity NaN undefined eval isFinite isNaN parseFloat parseInt decodeURI decodeURIComponent encodeURI ' +
    'encodeURIComponent escape unescape Object Function Array Number Boolean String Symbol BigInt Date RegExp Error ' +
    'AggregateError EvalError RangeError ReferenceError SyntaxError TypeError URIError InternalError Math JSON ' +
    'Reflect Proxy Promise Map Set WeakMap WeakSet WeakRef FinalizationRegistry ArrayBuffer DataView Int8Array ' +
    'Uint8Array Uint8ClampedArray Int16Array Uint16Array Int32Array Uint32Array Float16Array Float32Array Float64Array ' +
    'BigInt64Array BigUint64Array Iterator Intl console tools codemode setTimeout clearTimeout ToolError NoSuchToolError ' +
    'ToolValidationError ToolRejectedError queueMicrotask structuredClone'
  ).split(' '),
);
/** The timers and web APIs of issue 19 (README: What a JavaScript program has); their constructor chains are above. */
const WEB_GLOBALS = 'setInterval clearInterval URL URLSearchParams TextEncoder TextDecoder crypto'.split(' ');
for (const name of WEB_GLOBALS) STANDARD_GLOBALS.add(name);

const FORBIDDEN = ['process', 'require', 'Buffer', 'module', 'exports', '__dirname', '__filename', 'global'];

const LIST_GLOBALS_JS = `const STANDARD = new Set(${JSON.stringify([...STANDARD_GLOBALS])});
const names = Object.getOwnPropertyNames(globalThis);
const symbols = Object.getOwnPropertySymbols(globalThis).map(String);
const unknown = names.filter((n) => !STANDARD.has(n));
const probes = {};
const settle = (r) => Promise.race([Promise.resolve(r).catch(() => {}), new Promise((ok) => setTimeout(ok, 20))]);
const poke = async (fn, label) => {
  for (const args of [[], ['process'], ['return process'], [{}], [null, null], [-1], ['__proto__', { polluted: 1 }]]) {
    try { await settle(fn(...args)); } catch {}
  }
  try { if (fn.constructor('return typeof process')() !== 'undefined') probes[label] = 'PROCESS'; } catch {}
};
for (const n of unknown) {
  let v;
  try { v = globalThis[n]; } catch { probes[n] = 'getter threw'; continue; }
  probes[n] = typeof v;
  if (typeof v === 'function') await poke(v, n);
  else if (v && typeof v === 'object') {
    for (const k of Reflect.ownKeys(v)) {
      try { if (typeof v[k] === 'function') await poke(v[k].bind(v), n + '.' + String(k)); } catch {}
    }
  }
}
return { names, symbols, unknown, probes, typeofProcess: typeof process, typeofRequire: typeof require };`;

export function registerConstructorEscapes(options: SuiteOptions): void {
  defineGroup(options, 'escape: constructors and globals', (g) => {
    useHostChecks(g);

    for (const [name, expr] of Object.entries(CONSTRUCTOR_CHAINS)) {
      if (g.language !== 'javascript') break;
      g.program(`${name} does not reach the host`, { javascript: jsPayload(expr) }, async (src) => {
        const { failed, value } = await expectContained(g, src, { tools: [weatherTool(), boomTool()] });
        if (!failed) {
          expect(value).not.toMatchObject({ hostLike: true });
          expect(value).not.toMatchObject({ wrote: true });
        }
      });
    }
    for (const [name, { expr, setup }] of Object.entries(PY_CHAINS)) {
      if (g.language !== 'python') break;
      g.program(
        `${name} reaches os, which stays in the sandbox`,
        { python: pyPayload(expr, setup) },
        async (src) => {
          const { failed, value } = await expectContained(g, src, { tools: [weatherTool(), boomTool()] });
          expect(failed).toBe(false);
          const report = value as { module?: string; uid?: number; root?: string[]; wrote?: string };
          expect(['os', 'posix'], JSON.stringify(report)).toContain(report.module);
          expect(report.uid).not.toBe(0);
          expect(report.root).toEqual(sandboxRoot());
          // Written to the sandbox's own /tmp: useHostChecks asserts the host's marker does not exist.
          expect(report.wrote).toBe('in the sandbox');
        },
      );
    }
    notApplicable(
      g,
      g.language === 'python' ? 'Function-constructor chains to process' : 'Python object-graph chains to os',
      g.language === 'python'
        ? 'Python has no Function constructor and no host object in the process: its chains to os run instead'
        : 'Python-only',
    );

    escapeProgram(
      g,
      "globals() holds the program's names and codecall's, nothing of the runner",
      {
        na: 'Python-only (the JavaScript case is Function("return this")())',
        python: `{'names': sorted(k for k in globals() if not k.startswith('__')),
 'runner': [k for k in ${JSON.stringify(PY_FORBIDDEN)} if k in globals() or k in __builtins__],
 'builtins': type(__builtins__).__name__}`,
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src, { tools: [weatherTool()] }))).toEqual({
          names: PY_GLOBAL_NAMES,
          runner: [],
          builtins: 'dict',
        });
      },
    );

    escapeProgram(
      g,
      'Function("return this")() is the guest global, with nothing host-like on it',
      {
        na: "JavaScript's global object; Python's case is globals() above",
        javascript: `const g = Function('return this')();
return { same: g === globalThis, process: typeof g.process, require: typeof g.require, Buffer: typeof g.Buffer };`,
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toEqual({
          same: true,
          process: 'undefined',
          require: 'undefined',
          Buffer: 'undefined',
        });
      },
    );

    g.program(
      'the guest global holds nothing host-like, and poking unknown (internal) globals stays contained',
      { javascript: LIST_GLOBALS_JS, python: LIST_GLOBALS_PY },
      async (src) => {
        const { failed, value } = await expectContained(g, src, {
          tools: [weatherTool()],
          limits: { timeoutMs: 10_000 },
        });
        if (failed) return;
        const report = value as { names: string[]; unknown: string[]; probes: Record<string, string> };
        console.info(
          `[escape] ${g.options.name}: non-standard guest globals: ${JSON.stringify(report.probes)}`,
        );
        for (const name of g.language === 'python' ? PY_FORBIDDEN : FORBIDDEN) {
          expect(report.names).not.toContain(name);
        }
        expect(Object.values(report.probes)).not.toContain('PROCESS');
        if (g.language === 'python') expect(report.unknown).toEqual(PY_GLOBAL_NAMES);
      },
      30_000,
    );
  });
}
