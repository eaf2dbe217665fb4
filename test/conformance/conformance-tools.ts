import { expect } from 'vitest';
import { defineTool } from '../../src/tools/index.ts';
import { boomTool, echoTool, newToolLog, sleepTool, valueTool, weatherTool, zodTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectFailed, expectNoHostPaths, expectSucceeded, waitFor } from './harness.ts';

/** Catches the error of `CALL` and returns what the guest sees of it. */
const catchJs = (call: string): string => `
let isPromise = false;
try {
  const p = ${call};
  isPromise = p instanceof Promise;
  await p;
  return { noError: true };
} catch (e) {
  return {
    isPromise, name: e.name, code: e.code, message: e.message, stack: String(e.stack),
    isError: e instanceof Error, isToolError: e instanceof ToolError,
    isNoSuchTool: e instanceof NoSuchToolError, isValidation: e instanceof ToolValidationError,
  };
}`;

/** The same for Python: `CALL` is a call expression, awaited when it gives an awaitable. */
const catchPy = (call: string): string => `import traceback
is_awaitable = False
try:
    pending = ${call}
    is_awaitable = hasattr(pending, '__await__')
    if is_awaitable:
        await pending
    caught = {'noError': True}
except Exception as e:
    caught = {
        'isPromise': is_awaitable, 'name': type(e).__name__, 'code': getattr(e, 'code', None),
        'message': str(e), 'stack': ''.join(traceback.format_exception(e)),
        'isError': isinstance(e, Exception), 'isToolError': isinstance(e, ToolError),
        'isNoSuchTool': isinstance(e, NoSuchToolError), 'isValidation': isinstance(e, ToolValidationError),
    }
caught`;

interface Caught {
  noError?: boolean;
  isPromise: boolean;
  name: string;
  code: string;
  message: string;
  stack: string;
  isError: boolean;
  isToolError: boolean;
  isNoSuchTool: boolean;
  isValidation: boolean;
}

export function registerToolCases(options: SuiteOptions): void {
  defineGroup(options, 'tools', (g) => {
    g.program(
      'a tool call returns the tool result',
      {
        javascript: "const w = await tools.get_weather({ city: 'Paris' });\nreturn w;",
        python: "w = tools.get_weather(city='Paris')\nw",
      },
      async (src) => {
        const log = newToolLog();
        const result = await g.run(src, { tools: [weatherTool(log)] });
        expect(expectSucceeded(result)).toEqual({ city: 'Paris', tempC: 21, sky: 'clear' });
        expect(log.args).toEqual([{ city: 'Paris' }]);
      },
    );

    g.program(
      'a tool receives its arguments as JSON would give them: NaN and Infinity null, no undefined property',
      {
        javascript:
          'return await tools.echo({ u: undefined, n: NaN, i: -Infinity, l: [1, undefined], z: -0 });',
        // Python has no undefined: its None is null already.
        python: "tools.echo(n=float('nan'), i=float('-inf'), l=[1, None], z=-0.0)",
      },
      async (src) => {
        const log = newToolLog();
        const expected = { n: null, i: null, l: [1, null], z: 0 };
        expect(expectSucceeded(await g.run(src, { tools: [echoTool(log)] }))).toEqual(expected);
        expect(log.args).toEqual([expected]);
        expect(Object.is((log.args[0] as { z: number }).z, 0)).toBe(true);
        expect(Object.keys(log.args[0] as object).sort()).toEqual(['i', 'l', 'n', 'z']);
      },
    );

    g.program(
      'Dates and Maps in a tool result survive both ways',
      {
        javascript: `const r = await tools.dated({});
if (!(r.when instanceof Date) || !(r.m instanceof Map) || r.m.get('k') !== 1) throw new Error('lost types');
return { when: r.when, m: r.m, t: r.when.getTime() };`,
        python: `import datetime
r = tools.dated()
if not isinstance(r['when'], datetime.datetime) or not isinstance(r['m'], dict) or r['m'].get('k') != 1:
    raise TypeError('lost types')
{'when': r['when'], 'm': r['m'], 't': round(r['when'].timestamp() * 1000)}`,
      },
      async (src) => {
        const when = new Date('2021-05-06T07:08:09.000Z');
        const tool = valueTool('dated', () => ({ when, m: new Map([['k', 1]]) }));
        const value = expectSucceeded(await g.run(src, { tools: [tool] })) as {
          when: Date;
          m: Map<string, number>;
          t: number;
        };
        expect(value.when).toBeInstanceOf(Date);
        expect(value.t).toBe(when.getTime());
        expect(value.m).toBeInstanceOf(Map);
        expect(value.m.get('k')).toBe(1);
      },
    );

    g.program(
      'namespace puts a tool at that global',
      { javascript: 'return await x.ping({});', python: 'x.ping()' },
      async (src) => {
        const ping = defineTool({ name: 'ping', namespace: 'x', description: 'pong', execute: () => 'pong' });
        expect(expectSucceeded(await g.run(src, { tools: [ping] }))).toBe('pong');
      },
    );

    // Python's counterparts of names every JS object has: a private-looking name (the namespace object must keep
    // no internals there), the awaitable form of an unknown tool, and a dict method (a namespace is no dict).
    for (const [call, pythonCall] of [
      ['tools.nope({})', 'tools.nope()'],
      ['tools.constructor({})', 'tools._name()'],
      ['tools.__proto__({})', 'tools.nope_async()'],
      ['tools.toString()', 'tools.keys()'],
    ] as const) {
      g.program(
        `an unknown tool rejects with a catchable NoSuchToolError: ${call}`,
        { javascript: catchJs(call), python: catchPy(pythonCall) },
        async (src) => {
          const caught = expectSucceeded(await g.run(src, { tools: [weatherTool(), sleepTool()] })) as Caught;
          expect(caught).toMatchObject({
            // A JavaScript tool call is a promise that rejects; a Python one raises at the call.
            isPromise: g.language === 'javascript',
            name: 'NoSuchToolError',
            code: 'NO_SUCH_TOOL',
            isError: true,
            isToolError: true,
            isNoSuchTool: true,
          });
          expect(caught.message).toContain('get_weather');
          expect(caught.message).toContain('sleep');
        },
      );
    }

    g.program(
      'an uncaught unknown tool fails with NO_SUCH_TOOL',
      { javascript: 'await tools.nope({});', python: 'tools.nope()' },
      async (src) => {
        expectFailed(await g.run(src, { tools: [weatherTool()] }), 'NO_SUCH_TOOL');
      },
    );

    g.program(
      'a schema violation (JSON Schema) is a catchable ToolValidationError naming the field; execute not called',
      {
        javascript: catchJs('tools.get_weather({ city: 42 })'),
        python: catchPy('tools.get_weather(city=42)'),
      },
      async (src) => {
        const log = newToolLog();
        const caught = expectSucceeded(await g.run(src, { tools: [weatherTool(log)] })) as Caught;
        expect(caught).toMatchObject({
          name: 'ToolValidationError',
          code: 'TOOL_VALIDATION',
          isToolError: true,
          isValidation: true,
        });
        expect(caught.message).toContain('city');
        expect(log.args).toEqual([]);
      },
    );

    g.program(
      'a schema violation (zod) is a catchable ToolValidationError naming the field; execute not called',
      {
        javascript: catchJs("tools.order({ quantity: 'many' })"),
        python: catchPy("tools.order(quantity='many')"),
      },
      async (src) => {
        const log = newToolLog();
        const caught = expectSucceeded(await g.run(src, { tools: [zodTool(log)] })) as Caught;
        expect(caught).toMatchObject({
          name: 'ToolValidationError',
          code: 'TOOL_VALIDATION',
          isValidation: true,
        });
        expect(caught.message).toContain('quantity');
        expect(log.args).toEqual([]);
      },
    );

    g.program(
      "a tool's thrown error is a catchable ToolError with its code and no host stack",
      { javascript: catchJs('tools.boom({})'), python: catchPy('tools.boom()') },
      async (src) => {
        const caught = expectSucceeded(await g.run(src, { tools: [boomTool()] })) as Caught;
        expect(caught).toMatchObject({
          name: 'ToolError',
          code: 'E_BOOM',
          message: 'boom',
          isError: true,
          isToolError: true,
        });
        expect(caught.isNoSuchTool).toBe(false);
        expectNoHostPaths(caught.stack);
      },
    );

    g.program(
      'an uncaught tool error fails with its code',
      { javascript: 'await tools.boom({});\nreturn 1;', python: 'tools.boom()\n1' },
      async (src) => {
        const error = expectFailed(await g.run(src, { tools: [boomTool()] }), 'E_BOOM');
        expect(error.message).toContain('boom');
        expectNoHostPaths(JSON.stringify(error));
      },
    );

    g.program(
      'ToolError, NoSuchToolError and ToolValidationError are guest globals with working instanceof',
      {
        javascript: `return {
  types: [typeof ToolError, typeof NoSuchToolError, typeof ToolValidationError],
  base: ToolError.prototype instanceof Error,
  noSuch: NoSuchToolError.prototype instanceof ToolError,
  validation: ToolValidationError.prototype instanceof ToolError,
};`,
        python: `{
    'types': [type(c).__name__ for c in (ToolError, NoSuchToolError, ToolValidationError)],
    'base': issubclass(ToolError, Exception),
    'noSuch': issubclass(NoSuchToolError, ToolError),
    'validation': issubclass(ToolValidationError, ToolError),
}`,
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src))).toEqual({
          // Classes are functions in JavaScript and types in Python.
          types: Array<string>(3).fill(g.language === 'python' ? 'type' : 'function'),
          base: true,
          noSuch: true,
          validation: true,
        });
      },
    );

    g.program(
      'a tool returning a function is a catchable TOOL_RESULT_INVALID',
      { javascript: catchJs('tools.fn({})') + '\n', python: catchPy('tools.fn()') },
      async (src) => {
        const tool = valueTool('fn', () => ({ a: [1, () => 2] }));
        const caught = expectSucceeded(await g.run(src, { tools: [tool] })) as Caught;
        expect(caught.code).toBe('TOOL_RESULT_INVALID');
        expect(caught.isToolError).toBe(true);
      },
    );

    g.program(
      'a result violating the output schema is TOOL_RESULT_INVALID',
      { javascript: catchJs('tools.typed({})'), python: catchPy('tools.typed()') },
      async (src) => {
        const typed = defineTool({
          name: 'typed',
          description: 'bad output',
          output: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
          execute: () => ({ n: 'not a number' }),
        });
        expect((expectSucceeded(await g.run(src, { tools: [typed] })) as Caught).code).toBe(
          'TOOL_RESULT_INVALID',
        );
      },
    );

    g.program(
      'ctx.signal is an AbortSignal aborted when the execution ends',
      {
        javascript:
          "await tools.echo({ a: 1 });\nvoid tools.sleep({ ms: 60000 }).catch(() => {});\nreturn 'done';",
        // The sleep is a task left running: it starts while the program awaits the echo.
        python:
          "import asyncio\n\nleft = asyncio.ensure_future(tools.sleep_async(ms=60000))\nawait tools.echo_async(a=1)\n'done'",
      },
      async (src) => {
        const log = newToolLog();
        const result = await g.run(src, { tools: [echoTool(log), sleepTool(log)] });
        expect(expectSucceeded(result)).toBe('done');
        await waitFor(() => log.signals.length === 2, 2_000);
        for (const signal of log.signals) expect(signal).toBeInstanceOf(AbortSignal);
        await waitFor(() => log.signals.every((s) => s.aborted), 2_000);
      },
    );

    g.program(
      'ctx.callId identifies calls in issue order',
      {
        javascript: 'await Promise.all([tools.echo({ i: 0 }), tools.echo({ i: 1 }), tools.echo({ i: 2 })]);',
        python:
          'import asyncio\n\nawait asyncio.gather(tools.echo_async(i=0), tools.echo_async(i=1), tools.echo_async(i=2))',
      },
      async (src) => {
        const log = newToolLog();
        expectSucceeded(await g.run(src, { tools: [echoTool(log)] }));
        expect(log.callIds).toHaveLength(3);
        const byArg = log.args.map((a, i) => [(a as { i: number }).i, log.callIds[i] ?? ''] as const);
        byArg.sort((a, b) => a[0] - b[0]);
        const numbers = byArg.map(([, id]) => {
          expect(id).toMatch(/^call-\d+$/);
          return Number(id.slice(5));
        });
        expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
        expect(new Set(numbers).size).toBe(3);
      },
    );

    g.program(
      'a tool result is a copy: guest mutations do not reach the host',
      {
        javascript: "const r = await tools.shared({});\nr.count = 99;\nr.list.push('x');\nreturn r.count;",
        python: "r = tools.shared()\nr['count'] = 99\nr['list'].append('x')\nr['count']",
      },
      async (src) => {
        const shared = { count: 1, list: ['a'] };
        const tool = valueTool('shared', () => shared);
        expect(expectSucceeded(await g.run(src, { tools: [tool] }))).toBe(99);
        expect(shared).toEqual({ count: 1, list: ['a'] });
      },
    );
  });
}
