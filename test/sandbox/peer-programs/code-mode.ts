import type { PeerCase, PeerExpectation } from './peer-case.ts';

// Programs from Cloudflare's Code Mode (cloudflare/agents packages/codemode/src/tests/executor.test.ts,
// normalize.test.ts) and Vercel's code mode (vercel/ai packages/code-mode/src/core.test.ts, exceptions.test.ts),
// with the results their tests expect. Tools are in peer-tools.ts.
const CF = 'cloudflare/agents packages/codemode/src/tests/executor.test.ts';
const CF_NORMALIZE = 'cloudflare/agents packages/codemode/src/tests/normalize.test.ts';
const VERCEL = 'vercel/ai packages/code-mode/src/core.test.ts';
const VERCEL_ERR = 'vercel/ai packages/code-mode/src/exceptions.test.ts';
const VERCEL_TOOLS = 'vercel/ai packages/code-mode/src/tool-invocation.test.ts';

type Failure = Extract<PeerExpectation, { error: unknown }>['error'];
const v = (
  source: string,
  name: string,
  code: string,
  value: unknown,
  language: PeerCase['language'] = 'javascript',
): PeerCase => ({
  source,
  name,
  language,
  code,
  expect: { value },
});
const e = (source: string, name: string, code: string, error: Failure): PeerCase => ({
  source,
  name,
  language: 'javascript',
  code,
  expect: { error },
});

export const codeModeCases: readonly PeerCase[] = [
  v(CF, 'tool call through codemode', 'async () => await codemode.double({ n: 5 })', { doubled: 10 }),
  e(CF, 'unknown tool', 'async () => await codemode.nonexistent({})', {
    code: 'NO_SUCH_TOOL',
    message: 'nonexistent',
  }),
  v(CF, 'omitted arguments', 'async () => await codemode.noArgs()', []),
  v(CF, 'a value', 'async () => 42', 42),
  // Cloudflare's runtime names the globals there are; codecall names where the tool is.
  e(CF, 'a tool called as a global', 'async () => await add({ a: 3, b: 4 })', {
    name: 'ReferenceError',
    message: 'call it as tools.add(...)',
  }),
  v(CF, 'add', 'async () => await codemode.add({ a: 3, b: 4 })', 7),
  v(
    CF,
    'sequential calls',
    'async () => {\n  const weather = await codemode.getWeather({});\n  const news = await codemode.searchWeb({ query: "temp " + weather.temp });\n  return { weather, news };\n}',
    { weather: { temp: 72 }, news: { results: ['news about temp 72'] } },
  ),
  e(CF, 'code throws', 'async () => { throw new Error("boom"); }', { code: 'GUEST_ERROR', message: 'boom' }),
  e(CF, 'tool throws', 'async () => await codemode.fail({})', { message: 'tool error' }),
  v(
    CF,
    'Promise.all',
    'async () => {\n  const [a, b, c] = await Promise.all([\n    codemode.slow({ id: 1 }),\n    codemode.slow({ id: 2 }),\n    codemode.slow({ id: 3 })\n  ]);\n  return [a, b, c];\n}',
    [{ id: 1 }, { id: 2 }, { id: 3 }],
  ),
  v(
    CF,
    'console.log',
    'async () => { console.log("hello"); console.warn("careful"); return "done"; }',
    'done',
  ),
  v(CF, 'template literals', 'async () => { return `hello ${"world"}`; }', 'hello world'),
  e(
    CF,
    'fetch is not there to reach out',
    'async () => { const r = await fetch("https://example.com"); return r.status; }',
    { message: /fetch/ },
  ),
  v(CF, 'closures of tools', 'async () => await codemode.getSecret({})', { key: 'api-key-123' }),
  v(CF, '1 + 1', 'async () => 1 + 1', 2),
  v(CF, 'fenced code', '```js\nconst x = 1;\nx + 1\n```', 2),
  v(CF, 'a bare expression', '42', 42),
  v(CF, 'sanitized tool names', 'async () => await codemode.github_list_issues({})', [
    { id: 1, title: 'bug' },
  ]),
  e(CF, 'timeout', "async () => { await new Promise(r => setTimeout(r, 5000)); return 'done'; }", {
    code: 'TIMEOUT',
    message: '',
  }),
  v(CF_NORMALIZE, 'empty program', '', null),
  v(CF_NORMALIZE, 'sync arrow', '() => { return 1; }', 1),
  v(CF_NORMALIZE, 'arrow with a trailing semicolon', 'async () => { return 1; };', 1),
  v(CF_NORMALIZE, 'a bare sum', '1 + 2', 3),
  v(CF_NORMALIZE, 'statements then an expression', 'const x = 10;\nx * 2', 20),
  v(CF_NORMALIZE, 'a declaration last', 'const x = 42', null),
  v(CF_NORMALIZE, 'a for loop last', 'for (let i = 0; i < 10; i++) {}', null),
  v(CF_NORMALIZE, '```ts fence', '```ts\n() => 42\n```', 42),
  v(CF_NORMALIZE, '``` fence without a language', '```\nasync () => { return 1; }\n```', 1),
  v(CF_NORMALIZE, 'unclosed fence', '```js\nasync () => { return 1; }', 1),
  v(CF_NORMALIZE, 'export default arrow', 'export default async () => { return 1; }', 1),
  v(CF_NORMALIZE, 'export default value', 'export default 42', 42),
  v(CF_NORMALIZE, 'export default function', 'export default function() { return 42; }', 42),
  v(CF_NORMALIZE, 'a named async function', 'async function doStuff() { return 42; }', 42),
  v(CF_NORMALIZE, 'a named function', 'function compute() { return 1 + 2; }', 3),
  v(CF_NORMALIZE, 'a function then its call', 'function helper() { return 1; }\nhelper()', 1),
  v(CF_NORMALIZE, 'an IIFE', '(async () => { return 42; })()', 42),
  v(CF_NORMALIZE, 'top-level return', 'return 42', 42),
  v(CF_NORMALIZE, 'fenced export default', '```js\nexport default async () => { return 1; }\n```', 1),
  v(CF_NORMALIZE, 'whitespace around', '  () => 42  ', 42),
  v(VERCEL, 'return an object', 'return { answer: 40 + 2 };', { answer: 42 }),
  v(VERCEL, 'no return value', 'const value = 1 + 1;', null),
  v(
    VERCEL,
    'TypeScript annotations',
    'const value: number = 7; return { value };',
    { value: 7 },
    'typescript',
  ),
  v(
    VERCEL,
    'interface and satisfies',
    '\ninterface Item { value: number }\nconst item = { value: 12 } satisfies Item;\nreturn item;\n',
    { value: 12 },
    'typescript',
  ),
  v(
    VERCEL,
    'JSON',
    'const parsed = JSON.parse(\'{"count":2,"items":["a","b"]}\');\nparsed.items.push("c");\nreturn JSON.stringify(parsed);',
    '{"count":2,"items":["a","b","c"]}',
  ),
  v(VERCEL, 'a fresh global scope', "return globalThis.sharedValue ?? 'missing';", 'missing'),
  e(VERCEL_ERR, 'unknown tool', 'return await tools.nope({});', { code: 'NO_SUCH_TOOL', message: 'nope' }),
  e(VERCEL_ERR, 'syntax error', 'return ; }', {
    code: 'SYNTAX_ERROR',
    message: /unexpected|expecting|syntax/i,
  }),
  e(VERCEL_ERR, 'runtime exception', "throw new Error('sandbox exploded');", {
    code: 'GUEST_ERROR',
    message: 'sandbox exploded',
  }),
  // Vercel refuses a bigint (JSON has none); codecall's values carry it, and JSON shows it as a string.
  v(VERCEL_ERR, 'a bigint result', 'return 1n;', '1'),
  v(VERCEL_ERR, 'Infinity in the result', 'return { value: Infinity };', { value: null }),
  // Vercel drops a function (JSON.stringify); codecall refuses it, naming where it is.
  e(VERCEL_ERR, 'a function in the result', 'return { value: () => 1 };', {
    code: 'RESULT_INVALID',
    message: 'result.value',
  }),
  v(VERCEL_ERR, 'a Date from a tool', 'return await tools.date({});', '1970-01-01T00:00:00.000Z'),
  v(VERCEL_ERR, 'undefined properties from a tool', 'return await tools.catalog({});', {
    concepts: [{ name: 'first', recommendedNextAction: 'open' }, { name: 'second' }],
  }),
  {
    source: 'vercel/ai packages/code-mode/src/run-compatibility.test.ts',
    name: 'a tool name that is not an identifier',
    language: 'javascript',
    code: "return await tools['lookup-user']({ id: 'user-1' });",
    expect: { value: { id: 'user-1' } },
  },
  v(VERCEL_TOOLS, 'a tool call', 'return await tools.add({ a: 1, b: 2 });', 3),
  v(
    VERCEL_TOOLS,
    'an undefined tool output',
    'const value = await tools.nothing({}); return { type: typeof value };',
    { type: 'undefined' },
  ),
  v(VERCEL_TOOLS, 'a streaming tool', 'return await tools.stream({});', { step: 2 }),
];
