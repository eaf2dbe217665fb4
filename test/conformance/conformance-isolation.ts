import { expect } from 'vitest';
import { sleepTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectSucceeded } from './harness.ts';

/** Enough runs that every warm VM of a small pool has served one of them. */
const REPEAT = 6;

const AUTHORITY_JS = `return {
  require: typeof require, process: typeof process, SharedArrayBuffer: typeof SharedArrayBuffer,
  Atomics: typeof Atomics, WebAssembly: typeof WebAssembly, Buffer: typeof Buffer,
  module: typeof module, exports: typeof exports, __dirname: typeof __dirname, XMLHttpRequest: typeof XMLHttpRequest,
  WebSocket: typeof WebSocket, std: typeof std, os: typeof os, Deno: typeof Deno, Bun: typeof Bun,
  globalProcess: typeof globalThis.process, globalRequire: typeof globalThis.require,
};`;

// fetch is the host's (issue 21): without network_access it is refused before anything leaves the machine.
const FETCH_JS = `try { await fetch('http://127.0.0.1:9/'); return 'fetched'; } catch (e) { return e.code; }`;
const FETCH_PY = `import codecall
try:
    codecall.fetch('http://127.0.0.1:9/')
    result = 'fetched'
except codecall.FetchError as e:
    result = e.code
result`;

const IMPORT_JS = `const out = {};
for (const spec of ['fs', 'node:fs', 'child_process', 'std', 'os', '/etc/passwd', 'data:text/javascript,export default 1']) {
  try { await import(spec); out[spec] = 'imported'; } catch (e) { out[spec] = 'rejected'; }
}
return out;`;

const POLLUTE_JS = `const attempts = {};
const attempt = (name, fn) => { try { fn(); attempts[name] = 'no throw'; } catch { attempts[name] = 'threw'; } };
attempt('objectProto', () => { Object.prototype.polluted = 1; });
attempt('arrayPush', () => { Array.prototype.push = null; });
attempt('jsonStringify', () => { JSON.stringify = () => 'hijacked'; });
attempt('mathMax', () => { Math.max = () => -1; });
globalThis.leaked = 'yes';
return { attempts, polluted: ({}).polluted, push: typeof [].push, json: JSON.stringify({ a: 1 }), max: Math.max(1, 2), leaked: globalThis.leaked };`;

const CHECK_JS = `const a = [];
a.push(1);
return { polluted: ({}).polluted, a, json: JSON.stringify({ a: 1 }), max: Math.max(1, 2), leaked: typeof leaked, globalLeaked: typeof globalThis.leaked };`;

/** Set in the host's environment: a sandbox that inherited the environment would see it. */
const ENV_CANARY = 'CODECALL_CONFORMANCE_HOST_SECRET';

/**
 * Python's ambient authority is not globals (its standard library is there by design) but what the OS sandbox
 * lets through: the host's files, environment, network, processes and privileges. Each entry is 'undefined' when
 * the program cannot reach it.
 */
const AUTHORITY_PY = `import os, socket

def absent(reach):
    try:
        return 'undefined' if not reach() else 'reachable'
    except OSError:
        return 'undefined'

{
    'host files': absent(lambda: [p for p in ('/work', '/home', '/root', '/var', '/etc/passwd', '/run') if os.path.exists(p)]),
    'host environment': absent(lambda: '${ENV_CANARY}' in os.environ),
    'network': absent(lambda: socket.create_connection(('1.1.1.1', 53), timeout=1)),
    'network interfaces': absent(lambda: [name for _, name in socket.if_nameindex() if name != 'lo']),
    'other processes': absent(lambda: [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid())]),
    'root': absent(lambda: os.getuid() == 0 or os.geteuid() == 0),
    'capabilities': absent(lambda: 'CapEff:\\t0000000000000000' not in open('/proc/self/status').read()),
}`;

/** Python imports its standard library by design; what must not import is a module planted in the workspace. */
const IMPORT_PY = `import importlib

with open('planted.py', 'w') as f:
    f.write('value = 1')
out = {}
# Not 'fs': in Python it is PyFilesystem2 (python3-fs, which the image's matplotlib brings through fonttools).
for spec in ['planted', 'node:fs', 'child_process', '/etc/passwd']:
    try:
        importlib.import_module(spec)
        out[spec] = 'imported'
    except ImportError:
        out[spec] = 'rejected'
out`;

/**
 * Built-in types are immutable in Python, as frozen intrinsics are in JavaScript; modules (json, random, time,
 * builtins) are the program's to patch, within its own execution only.
 */
const POLLUTE_PY = `import builtins, json, random, time

attempts = {}
def attempt(name, fn):
    try:
        fn()
        attempts[name] = 'no throw'
    except Exception:
        attempts[name] = 'threw'
attempt('objectProto', lambda: setattr(object, 'polluted', 1))
attempt('arrayPush', lambda: setattr(list, 'append', None))
attempt('dictGet', lambda: setattr(dict, 'get', None))
attempt('jsonStringify', lambda: setattr(json, 'dumps', lambda *a, **k: 'hijacked'))
attempt('mathMax', lambda: setattr(builtins, 'max', lambda *a, **k: -1))
attempt('random', lambda: setattr(random, 'random', lambda: 0.5))
attempt('clock', lambda: setattr(time, 'time', lambda: 0))
builtins.leaked = 'yes'
{
    'attempts': attempts, 'polluted': getattr(object(), 'polluted', None),
    'push': 'function' if callable([].append) else 'not a function', 'json': json.dumps({'a': 1}),
    'max': max(1, 2), 'leaked': builtins.leaked,
}`;

const CHECK_PY = `import builtins, json, random, time

a = []
a.append(1)
{
    'polluted': getattr(object(), 'polluted', None), 'a': a, 'json': json.dumps({'a': 1}, separators=(',', ':')),
    'max': builtins.max(1, 2), 'leaked': 'undefined' if 'leaked' not in globals() else 'defined',
    'globalLeaked': 'undefined' if not hasattr(builtins, 'leaked') else 'defined',
    'random': random.random() != 0.5, 'clock': time.time() != 0,
}`;

export function registerIsolationCases(options: SuiteOptions): void {
  process.env[ENV_CANARY] = 'the host environment';
  defineGroup(options, 'isolation & ambient authority', (g) => {
    g.program(
      'no ambient authority: host globals are undefined',
      { javascript: AUTHORITY_JS, python: AUTHORITY_PY },
      async (src) => {
        const value = expectSucceeded(await g.run(src)) as Record<string, string>;
        for (const [name, type] of Object.entries(value))
          expect(`${name}: ${type}`).toBe(`${name}: undefined`);
      },
    );

    g.program(
      'fetch is no ambient authority: without network access it is refused, nothing is sent',
      { javascript: FETCH_JS, python: FETCH_PY },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toBe('EGRESS_REFUSED');
      },
    );

    g.program('import() of modules rejects', { javascript: IMPORT_JS, python: IMPORT_PY }, async (src) => {
      const value = expectSucceeded(await g.run(src)) as Record<string, string>;
      for (const [spec, outcome] of Object.entries(value))
        expect(`${spec}: ${outcome}`).toBe(`${spec}: rejected`);
    });

    g.programs(
      'intrinsics are frozen: pollution throws or has no effect, now and in later executions; globals do not survive',
      {
        javascript: { pollute: POLLUTE_JS, check: CHECK_JS },
        python: { pollute: POLLUTE_PY, check: CHECK_PY },
      },
      async (src) => {
        const polluted = expectSucceeded(await g.run(src.pollute)) as Record<string, unknown>;
        if (g.language === 'python') {
          // The types threw; the patched module has its effect in this execution (and, below, in no other).
          expect(polluted).toMatchObject({
            attempts: { objectProto: 'threw', arrayPush: 'threw', dictGet: 'threw' },
            polluted: null,
            push: 'function',
            json: 'hijacked',
            max: 2,
          });
        } else {
          expect(polluted).toMatchObject({ polluted: undefined, push: 'function', json: '{"a":1}', max: 2 });
        }
        for (let i = 0; i < REPEAT; i++) {
          expect(expectSucceeded(await g.run(src.check))).toEqual({
            polluted: g.language === 'python' ? null : undefined,
            a: [1],
            json: '{"a":1}',
            max: 2,
            leaked: 'undefined',
            globalLeaked: 'undefined',
            ...(g.language === 'python' ? { random: true, clock: true } : {}),
          });
        }
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      },
    );

    g.programs(
      'timers and tool calls left pending by a finished execution never reach a later one',
      {
        javascript: {
          leave: `setTimeout(() => { globalThis.late = 'timer'; console.log('late timer'); }, 40);
tools.sleep({ ms: 40 }).then(() => { globalThis.late = 'tool'; console.log('late tool'); });
return 'left';`,
          wait: 'await new Promise((r) => setTimeout(r, 150));\nreturn typeof globalThis.late;',
        },
        // The tasks start (and issue their timer and tool call) while the program awaits sleep(0).
        python: {
          leave: `import asyncio, builtins

async def late_timer():
    await asyncio.sleep(0.04)
    builtins.late = 'timer'
    print('late timer')
async def late_tool():
    await tools.sleep_async(ms=40)
    builtins.late = 'tool'
    print('late tool')
asyncio.ensure_future(late_timer())
asyncio.ensure_future(late_tool())
await asyncio.sleep(0)
'left'`,
          wait: "import asyncio, builtins\n\nawait asyncio.sleep(0.15)\n'undefined' if not hasattr(builtins, 'late') else 'defined'",
        },
      },
      async (src) => {
        for (let i = 0; i < REPEAT / 2; i++) {
          expect(expectSucceeded(await g.run(src.leave, { tools: [sleepTool()] }))).toBe('left');
          const later = await Promise.all([g.run(src.wait), g.run(src.wait)]);
          for (const r of later) {
            expect(expectSucceeded(r)).toBe('undefined');
            expect(r.logs).toEqual([]);
          }
        }
      },
    );

    g.programs(
      'a global set in one execution is gone in the next',
      {
        javascript: {
          set: "globalThis.carry = 'over';\nvar carried = 1;\nreturn typeof carry;",
          get: 'return [typeof carry, typeof carried];',
        },
        // builtins is Python's globalThis; a module-level name is its var.
        python: {
          set: "import builtins\n\nbuiltins.carry = 'over'\ncarried = 1\ntype(builtins.carry).__name__",
          get: "import builtins\n\n['undefined' if not hasattr(builtins, 'carry') else 'defined', 'undefined' if 'carried' not in globals() else 'defined']",
        },
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src.set))).toBe(g.language === 'python' ? 'str' : 'string');
        for (let i = 0; i < REPEAT; i++)
          expect(expectSucceeded(await g.run(src.get))).toEqual(['undefined', 'undefined']);
      },
    );

    g.program(
      'Math.random and Date.now cannot be replaced (frozen intrinsics)',
      {
        javascript: `try { Math.random = () => 0.5; } catch {}
try { Date.now = () => 0; } catch {}
return [Math.random() === 0.5, Date.now() === 0];`,
        python: `import random, time

try:
    random.random = lambda: 0.5
except Exception:
    pass
try:
    time.time = lambda: 0
except Exception:
    pass
[random.random() == 0.5, time.time() == 0]`,
      },
      async (src) => {
        // Python has no frozen intrinsics: random and time are modules, the program's to patch in its own
        // execution. That no later execution sees the patch is checked by the pollution case above.
        const replaced = g.language === 'python';
        expect(expectSucceeded(await g.run(src))).toEqual([replaced, replaced]);
      },
    );
  });
}
