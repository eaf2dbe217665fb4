import { expect } from 'vitest';
import { boomTool, newToolLog, weatherTool } from './fixtures.ts';
import type { Source, SuiteOptions } from './harness.ts';
import { defineGroup, expectNoHostPaths, expectSucceeded } from './harness.ts';
import { expectContained, expectPlainData, useHostChecks } from './escape-support.ts';

/** Enough runs that every warm VM of a small pool serves one. */
const REPEAT = 6;

/** Each tampers with the guest's intrinsics or globals before a tool call; each attempt is wrapped in try. */
const POLLUTIONS: Record<string, string> = {
  'Object.prototype (property and a thenable getter)': `Object.prototype.polluted = 1;
Object.defineProperty(Object.prototype, 'then', { get() { return (ok) => ok('hijacked'); }, configurable: true });`,
  'Object.prototype.toJSON': "Object.prototype.toJSON = function () { return 'hijacked'; };",
  'Array.prototype methods': 'Array.prototype.push = function () { return 0; };\nArray.prototype.map = null;',
  'Array.prototype[Symbol.iterator] (lying)':
    "Array.prototype[Symbol.iterator] = function* () { yield 'evil'; };",
  'Array.prototype[Symbol.iterator] (endless)':
    'Array.prototype[Symbol.iterator] = function* () { while (true) yield 1; };',
  'Promise.prototype.then (lying)': "Promise.prototype.then = function (ok) { return ok('hijacked'); };",
  'Promise.prototype.then (looping)': 'Promise.prototype.then = function () { while (true) {} };',
  'JSON.parse / JSON.stringify replaced': `JSON.parse = () => ({ hijacked: true });
JSON.stringify = () => '{"hijacked":true}';`,
  'Object / Reflect helpers replaced': `Object.defineProperty = () => { throw new Error('no'); };
Object.freeze = (x) => x;
Object.keys = () => [];
Reflect.ownKeys = () => [];`,
  'Function.prototype call/apply/bind': `Function.prototype.call = function () { throw new Error('call hijacked'); };
Function.prototype.apply = Function.prototype.call;
Function.prototype.bind = Function.prototype.call;`,
  'global constructors replaced': `globalThis.Promise = function () {};
globalThis.Error = null;
globalThis.Map = null;
globalThis.Date = null;
globalThis.JSON = null;`,
  'codecall globals replaced': `globalThis.tools = new Proxy({}, { get: () => () => 'fake' });
globalThis.ToolError = null;
globalThis.setTimeout = null;
console.log = () => {};`,
  'Map/Set prototypes': 'Map.prototype.set = null;\nMap.prototype.entries = null;\nSet.prototype.add = null;',
  'Error.prepareStackTrace returning host-looking frames': `Error.prepareStackTrace = (e, frames) =>
  frames.map((f) => [typeof f.getThis?.(), typeof f.getFunction?.(), String(f.getFileName?.())]);`,
  'Error.prepareStackTrace throwing': "Error.prepareStackTrace = () => { throw new Error('pst'); };",
  'Error.prepareStackTrace looping': 'Error.prepareStackTrace = () => { while (true) {} };',
  'Error.stackTraceLimit = Infinity': 'Error.stackTraceLimit = Infinity;',
};

/** Wraps each statement so that a frozen intrinsic (which throws) does not stop the rest. */
function guarded(statements: string): string {
  return statements
    .split(/;\n/)
    .map((s) => `try { ${s.replace(/;$/, '')}; } catch {}`)
    .join('\n');
}

const CANARY_JS = `const a = [];
a.push(1);
return {
  polluted: ({}).polluted, then: typeof ({}).then, toJSON: typeof ({}).toJSON, push: a.length,
  map: typeof [].map, spread: [...[1, 2]], promise: await Promise.resolve(5),
  json: JSON.stringify(JSON.parse('{"a":[1]}')), call: Math.max.call(null, 1, 2),
  ctors: [typeof Error, typeof Promise, typeof Map, typeof Date, typeof JSON, typeof ToolError, typeof setTimeout],
  map2: new Map([[1, 2]]).get(1), keys: Object.keys({ k: 1 }),
  prepare: typeof Error.prepareStackTrace, limit: Error.stackTraceLimit,
  weather: (await tools.get_weather({ city: 'Oslo' })).city,
};`;

export function registerPollutionEscapes(options: SuiteOptions): void {
  defineGroup(options, 'escape: pollution of intrinsics', (g) => {
    useHostChecks(g);
    let baseline: unknown;
    /** The canary's value in an execution nothing was done to (computed once). */
    const canaryBaseline = async (src: Source): Promise<unknown> => {
      baseline ??= expectSucceeded(await g.run(src, { tools: [weatherTool()] }));
      return baseline;
    };

    g.program('baseline: the canary in a fresh execution', { javascript: CANARY_JS }, async (src) => {
      expect(await canaryBaseline(src)).toMatchObject({
        polluted: undefined,
        then: 'undefined',
        push: 1,
        weather: 'Oslo',
      });
    });

    for (const [name, statements] of Object.entries(POLLUTIONS)) {
      g.programs(
        `${name}: the host, the tool arguments and later executions are unaffected`,
        {
          javascript: {
            pollute: `${guarded(statements)}\nconst w = await tools.get_weather({ city: 'Paris' });\nreturn { city: w.city };`,
            canary: CANARY_JS,
          },
        },
        async (src) => {
          const expected = await canaryBaseline(src.canary);
          const log = newToolLog();
          await expectContained(g, src.pollute, {
            tools: [weatherTool(log), boomTool()],
            limits: { timeoutMs: 1_500 },
          });
          for (const args of log.args) {
            expectPlainData(args);
            expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
          }
          for (let i = 0; i < REPEAT; i++) {
            const canary = expectSucceeded(await g.run(src.canary, { tools: [weatherTool()] }));
            expect(canary).toEqual(expected);
          }
        },
        30_000,
      );
    }

    g.program(
      'stack traces built by a tampered Error.prepareStackTrace show no host paths',
      {
        javascript: `Error.prepareStackTrace = (e, frames) =>
  frames.map((f) => [String(f.getFileName?.()), String(f.getFunctionName?.()), typeof f.getThis?.()].join('|')).join('\\n');
let toolStack = '';
try { await tools.boom({}); } catch (e) { toolStack = String(e.stack); }
const own = String(new Error('x').stack);
const captured = {};
try { Error.captureStackTrace(captured); } catch {}
return { toolStack, own, captured: String(captured.stack) };`,
      },
      async (src) => {
        const { failed, value } = await expectContained(g, src, { tools: [boomTool()] });
        if (!failed) expectNoHostPaths(JSON.stringify(value));
      },
    );
  });
}
