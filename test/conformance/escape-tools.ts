import { expect } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import type { ToolDefinition } from '../../src/spec/index.ts';
import { defineTool } from '../../src/tools/index.ts';
import { echoTool, newToolLog, valueTool, weatherTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectSucceeded } from './harness.ts';
import { expectContained, expectPlainData, useHostChecks } from './escape-support.ts';

/** Tool arguments the guest may try to smuggle a live object or a trap through. */
const HOSTILE_ARGS: Record<string, string> = {
  'a Proxy': "new Proxy({ a: 1 }, { get: (t, k) => (k === 'a' ? 2 : t[k]) })",
  'a Proxy with throwing traps':
    "new Proxy({}, { ownKeys() { throw new Error('trap'); }, get() { throw new Error('trap'); } })",
  'a Proxy with looping traps': 'new Proxy({ a: 1 }, { ownKeys() { while (true) {} } })',
  'a getter': '{ get a() { return 5; } }',
  'a throwing getter': "{ get a() { throw new Error('trap'); } }",
  'a looping getter': '{ get a() { while (true) {} } }',
  'a function': '{ f() { return 1; }, a: 1 }',
  'a cycle': '(() => { const o = { a: 1 }; o.self = o; return o; })()',
  'a __proto__ key': 'JSON.parse(\'{"__proto__": {"polluted": true}, "a": 1}\')',
  'a symbol': "{ s: Symbol('x') }",
  toJSON: '{ a: 1, toJSON() { return { hijacked: true }; } }',
  'a 1e5-deep object': '(() => { let o = {}; for (let i = 0; i < 1e5; i++) o = { o }; return o; })()',
  'a Date with poisoned methods':
    '(() => { const d = new Date(0); d.toISOString = () => { while (true) {} }; d.getTime = d.toISOString; return { d }; })()',
  'an array with a poisoned iterator':
    '(() => { const a = [1, 2]; a[Symbol.iterator] = function* () { while (true) yield 1; }; return { a }; })()',
};

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
      g.program(
        `tool arguments with ${name} reach the tool as plain data`,
        {
          javascript: `let outcome;
try { await tools.echo(${args}); outcome = 'called'; } catch (e) { outcome = String(e && e.code); }
return outcome;`,
        },
        async (src) => {
          const log = newToolLog();
          await expectContained(g, src, { tools: [echoTool(log)], limits: { timeoutMs: 1_500 } });
          for (const received of log.args) {
            expectPlainData(received);
            const proto: unknown = Object.getPrototypeOf(received);
            expect(proto === Object.prototype || proto === null).toBe(true);
          }
        },
      );
    }

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
      { javascript: CALL_RESERVED_JS },
      async (src) => {
        const log = newToolLog();
        const value = expectSucceeded(await g.run(src, { tools: [weatherTool(log)] })) as Record<
          string,
          string
        >;
        for (const n of RESERVED) expect(`${n}: ${value[`n:${n}`]}`).toBe(`${n}: NO_SUCH_TOOL`);
        expect(['NO_SUCH_TOOL', 'undefined']).toContain(value['n:then']);
        expect(value.weather).toBe('Paris');
        expect(log.args).toEqual([{ city: 'Paris' }]);
      },
    );

    g.program(
      'tool definitions named __proto__ / constructor / hasOwnProperty (bypassing defineTool) stay contained',
      {
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
        ];
        const { failed, value } = await expectContained(g, src, { tools });
        if (!failed) expect(value).toMatchObject({ proto: true, has: true, weather: 'Rome' });
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
