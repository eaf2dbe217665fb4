import { expect } from 'vitest';
import { sleepTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectSucceeded } from './harness.ts';

/** Enough runs that every warm VM of a small pool has served one of them. */
const REPEAT = 6;

const AUTHORITY_JS = `return {
  require: typeof require, process: typeof process, SharedArrayBuffer: typeof SharedArrayBuffer,
  Atomics: typeof Atomics, WebAssembly: typeof WebAssembly, fetch: typeof fetch, Buffer: typeof Buffer,
  module: typeof module, exports: typeof exports, __dirname: typeof __dirname, XMLHttpRequest: typeof XMLHttpRequest,
  WebSocket: typeof WebSocket, std: typeof std, os: typeof os, Deno: typeof Deno, Bun: typeof Bun,
  globalProcess: typeof globalThis.process, globalRequire: typeof globalThis.require,
};`;

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

export function registerIsolationCases(options: SuiteOptions): void {
  defineGroup(options, 'isolation & ambient authority', (g) => {
    g.program(
      'no ambient authority: host globals are undefined',
      { javascript: AUTHORITY_JS },
      async (src) => {
        const value = expectSucceeded(await g.run(src)) as Record<string, string>;
        for (const [name, type] of Object.entries(value))
          expect(`${name}: ${type}`).toBe(`${name}: undefined`);
      },
    );

    g.program('import() of modules rejects', { javascript: IMPORT_JS }, async (src) => {
      const value = expectSucceeded(await g.run(src)) as Record<string, string>;
      for (const [spec, outcome] of Object.entries(value))
        expect(`${spec}: ${outcome}`).toBe(`${spec}: rejected`);
    });

    g.programs(
      'intrinsics are frozen: pollution throws or has no effect, now and in later executions; globals do not survive',
      { javascript: { pollute: POLLUTE_JS, check: CHECK_JS } },
      async (src) => {
        const polluted = expectSucceeded(await g.run(src.pollute)) as Record<string, unknown>;
        expect(polluted).toMatchObject({ polluted: undefined, push: 'function', json: '{"a":1}', max: 2 });
        for (let i = 0; i < REPEAT; i++) {
          expect(expectSucceeded(await g.run(src.check))).toEqual({
            polluted: undefined,
            a: [1],
            json: '{"a":1}',
            max: 2,
            leaked: 'undefined',
            globalLeaked: 'undefined',
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
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src.set))).toBe('string');
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
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toEqual([false, false]);
      },
    );
  });
}
