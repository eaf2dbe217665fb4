import { expect } from 'vitest';
import { boomTool, newToolLog, weatherTool } from './fixtures.ts';
import type { PerLanguage, Source, SuiteOptions } from './harness.ts';
import { defineGroup, expectNoHostPaths, expectSucceeded } from './harness.ts';
import { expectContained, expectPlainData, notApplicable, useHostChecks } from './escape-support.ts';

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

/**
 * Python's counterparts: each execution is a fresh interpreter, so nothing can last into the next; what is left
 * to show is that tampering with builtins, the modules the runner uses, or the runner itself (reached through gc)
 * never makes the host accept anything but plain data, nor changes the host or a later execution.
 */
const PY_POLLUTIONS: Record<string, string> = {
  'builtins replaced (isinstance, len, str, getattr, callable)': `import builtins
builtins.isinstance = lambda *a: True
builtins.len = lambda *a: 0
builtins.str = lambda *a: 'hijacked'
builtins.getattr = lambda *a: (lambda *b, **k: {'hijacked': True})
builtins.callable = lambda *a: True`,
  'json.dumps / json.loads replaced': `import json
json.dumps = lambda *a, **k: '{"__proto__":{"polluted":true}}'
json.loads = lambda *a, **k: {'hijacked': True}`,
  "the runner's own functions replaced (reached through gc)": `import gc
for o in gc.get_objects():
    if isinstance(o, dict) and '_send' in o and '_encode' in o:
        o['_encode'] = lambda v: '{"city":"Paris","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'
        o['_dec'] = lambda v: {'city': 'hijacked'}`,
  "the runner's message writer replaced": `import gc
for o in gc.get_objects():
    if isinstance(o, dict) and '_send' in o and '_dumps' in o:
        o['_dumps'] = lambda *a, **k: '{"t":"call","id":"x","ns":"tools","name":"get_weather","args":"{\\\\"__proto__\\\\":{\\\\"polluted\\\\":true}}"}'`,
  'sys.stdout, sys.stderr and print replaced': `import sys, builtins
class Bad:
    def write(self, t):
        raise RuntimeError('trap')
    def flush(self):
        while True:
            pass
sys.stdout = sys.stderr = Bad()
builtins.print = None`,
  'asyncio and the event loop replaced': `import asyncio
asyncio.get_running_loop = None
asyncio.Future = None
asyncio.set_event_loop_policy(None)
asyncio.set_event_loop(None)`,
  'sys.modules poisoned': `import sys
for m in ('json', 'os', 'datetime', 'asyncio', 'selectors', 'traceback'):
    sys.modules[m] = None`,
  "the namespace's tools replaced": `object.__setattr__(tools, 'get_weather', lambda **k: {'city': 'fake'})
type(tools).__getattr__ = lambda self, n: (lambda *a, **k: {'city': 'fake'})`,
  'ctypes overwriting the small int 1': `import ctypes
ctypes.cast(id(1), ctypes.POINTER(ctypes.c_long))[3] = 2`,
  'the protocol fds swapped': `import os
os.dup2(os.open('/dev/null', os.O_RDWR), 4)`,
};

const CANARY_PY = `import json, builtins, sys, asyncio
w = tools.get_weather(city='Oslo')
{
    'isinstance': isinstance(1, int), 'len': len([1, 2]), 'str': str(5), 'print': callable(print),
    'json': json.dumps(json.loads('{"a":[1]}')), 'dict': type({}).__name__, 'one': 1 + 1,
    'stdout': type(sys.stdout).__name__, 'modules': [m for m in ('json', 'os', 'asyncio') if sys.modules.get(m) is None],
    'loop': type(asyncio.get_event_loop()).__name__, 'ctors': [c.__name__ for c in (ToolError, Exception, dict, list)],
    'weather': w['city'],
}`;

/** Wraps each statement so that a frozen intrinsic (which throws) does not stop the rest. */
/** Python: the tampering (its failure is ignored), then the same call and result as the JavaScript cases. */
function pyGuarded(statements: string): string {
  const body = statements
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
  return `try:\n${body}\nexcept BaseException:\n    pass\nw = tools.get_weather(city='Paris')\n{'city': w['city']}`;
}

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

    g.program(
      'baseline: the canary in a fresh execution',
      { javascript: CANARY_JS, python: CANARY_PY },
      async (src) => {
        expect(await canaryBaseline(src)).toMatchObject(
          g.language === 'python'
            ? { isinstance: true, len: 2, str: '5', one: 2, modules: [], weather: 'Oslo' }
            : { polluted: undefined, then: 'undefined', push: 1, weather: 'Oslo' },
        );
      },
    );

    // Each language's own ways to tamper with its runtime (none has the other's): the same checks follow.
    const pollutions: [string, PerLanguage<{ pollute: string; canary: string }>][] =
      g.language === 'python'
        ? Object.entries(PY_POLLUTIONS).map(([name, statements]) => [
            name,
            { python: { pollute: pyGuarded(statements), canary: CANARY_PY } },
          ])
        : Object.entries(POLLUTIONS).map(([name, statements]) => [
            name,
            {
              javascript: {
                pollute: `${guarded(statements)}\nconst w = await tools.get_weather({ city: 'Paris' });\nreturn { city: w.city };`,
                canary: CANARY_JS,
              },
            },
          ]);
    notApplicable(
      g,
      g.language === 'python' ? 'JavaScript intrinsics pollution' : 'Python runtime tampering',
      g.language === 'python'
        ? 'Python has no prototypes to pollute; its own tampering cases run instead'
        : 'the Python cases tamper with CPython (builtins, gc, ctypes)',
    );
    for (const [name, programs] of pollutions) {
      g.programs(
        `${name}: the host, the tool arguments and later executions are unaffected`,
        programs,
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
        // Python builds its tracebacks itself; what crosses from the host is a tool error's message and details.
        python: `import traceback, sys
tool_stack = ''
try:
    tools.boom()
except ToolError as e:
    tool_stack = ''.join(traceback.format_exception(e)) + repr(e.details) + e.message + repr(vars(e))
own = ''.join(traceback.format_stack())
try:
    raise RuntimeError('x')
except RuntimeError as e:
    caught = ''.join(traceback.format_exception(e))
{'toolStack': tool_stack, 'own': own, 'captured': caught, 'path': sys.path, 'argv': sys.argv}`,
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
