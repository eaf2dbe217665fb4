import { expect } from 'vitest';
import { boomTool, weatherTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectSucceeded } from './harness.ts';
import { expectContained, jsPayload, useHostChecks } from './escape-support.ts';

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

/** ECMAScript globals plus what codecall documents; anything else on the guest global is probed. */
const STANDARD_GLOBALS = new Set(
  (
    'globalThis Infinity NaN undefined eval isFinite isNaN parseFloat parseInt decodeURI decodeURIComponent encodeURI ' +
    'encodeURIComponent escape unescape Object Function Array Number Boolean String Symbol BigInt Date RegExp Error ' +
    'AggregateError EvalError RangeError ReferenceError SyntaxError TypeError URIError InternalError Math JSON ' +
    'Reflect Proxy Promise Map Set WeakMap WeakSet WeakRef FinalizationRegistry ArrayBuffer DataView Int8Array ' +
    'Uint8Array Uint8ClampedArray Int16Array Uint16Array Int32Array Uint32Array Float16Array Float32Array Float64Array ' +
    'BigInt64Array BigUint64Array Iterator Intl console tools setTimeout clearTimeout ToolError NoSuchToolError ' +
    'ToolValidationError ToolRejectedError queueMicrotask structuredClone'
  ).split(' '),
);

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
      g.program(`${name} does not reach the host`, { javascript: jsPayload(expr) }, async (src) => {
        const { failed, value } = await expectContained(g, src, { tools: [weatherTool(), boomTool()] });
        if (!failed) {
          expect(value).not.toMatchObject({ hostLike: true });
          expect(value).not.toMatchObject({ wrote: true });
        }
      });
    }

    g.program(
      'Function("return this")() is the guest global, with nothing host-like on it',
      {
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
      { javascript: LIST_GLOBALS_JS },
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
        for (const name of FORBIDDEN) expect(report.names).not.toContain(name);
        expect(Object.values(report.probes)).not.toContain('PROCESS');
      },
      30_000,
    );
  });
}
