import type { PeerCase, PeerExpectation } from './peer-case.ts';

// Forms models write in code mode that peers' tests do not cover, each found failing or wrong while triaging
// issue 19 (the tools are peer-tools.ts).
const SOURCE = 'what models write (issue 19 triage)';
type Failure = Extract<PeerExpectation, { error: unknown }>['error'];

const v = (
  language: PeerCase['language'],
  name: string,
  code: string,
  value: unknown,
  gap?: string,
): PeerCase => ({
  source: SOURCE,
  name,
  language,
  code,
  expect: { value },
  ...(gap ? { gap } : {}),
});
const e = (language: PeerCase['language'], name: string, code: string, error: Failure): PeerCase => ({
  source: SOURCE,
  name,
  language,
  code,
  expect: { error },
});

export const modelHabitCases: readonly PeerCase[] = [
  // Python
  v('python', 'fenced python', '```python\nr = tools.add(a=1, b=2)\nr * 10\n```', 30),
  v('python', 'fenced py with <end_code>', '```py\nfinal_answer(tools.add(a=2, b=2))\n```<end_code>', 4),
  v(
    'python',
    'result assigned last',
    'weather = tools.getWeather()\nsummary = f"{weather[\'temp\']}F"',
    '72F',
  ),
  v(
    'python',
    'asyncio.run(main())',
    'import asyncio\nasync def main():\n    a, b = await asyncio.gather(tools.add_async(a=1, b=2), tools.add_async(a=3, b=4))\n    return a + b\nasyncio.run(main())',
    10,
  ),
  v(
    'python',
    'if __name__ == "__main__"',
    'def main():\n    return tools.add(a=20, b=22)\n\nif __name__ == "__main__":\n    main()',
    42,
  ),
  v('python', 'sys.exit(0) after printing', 'import sys\nprint(tools.add(a=1, b=1))\nsys.exit(0)', null),
  e('python', 'sys.exit(1)', 'import sys\nsys.exit(1)', { name: 'SystemExit', message: 'exit(1)' }),
  v(
    'python',
    'a dataclass result',
    'from dataclasses import dataclass\n@dataclass\nclass Point:\n    x: int\n    y: int\nPoint(1, 2)',
    { x: 1, y: 2 },
  ),
  v(
    'python',
    'an Enum in the result',
    'from enum import Enum\nclass Color(Enum):\n    RED = "red"\n{"color": Color.RED}',
    { color: 'red' },
  ),
  e('python', 'a tool called bare', 'getWeather()', { name: 'NameError', message: 'tools.getWeather(...)' }),
  e('python', 'a tool given a positional argument', 'tools.add_two(3)', {
    name: 'TypeError',
    message: 'keyword arguments',
  }),
  e('python', 'top-level return', 'x = 1\nreturn x', {
    code: 'SYNTAX_ERROR',
    message: "'return' outside function",
  }),
  e('python', 'a Decimal result', 'from decimal import Decimal\nDecimal("1.10")', {
    code: 'RESULT_INVALID',
    message: 'Decimal',
  }),
  // requests is in the image and goes through the host (ADR 0048); without network_access it is refused, saying how.
  e('python', 'requests without network access', 'import requests\nrequests.get("https://example.com")', {
    code: 'EGRESS_REFUSED',
    message: 'network_access',
  }),
  e(
    'python',
    'subprocess through asyncio',
    'import asyncio\nasync def m():\n    await asyncio.create_subprocess_exec("ls")\nasyncio.run(m())',
    { name: 'PermissionError', message: 'allow_subprocesses' },
  ),
  // JavaScript
  v('javascript', 'toLocaleString of a number', '(1234567.5).toLocaleString()', '1,234,567.5'),
  v(
    'javascript',
    'currency formatting',
    '(1234.5).toLocaleString("en-US", { style: "currency", currency: "USD" })',
    '$1,234.50',
  ),
  v(
    'javascript',
    'a sort by localeCompare',
    '["banana", "Apple", "cherry"].sort((a, b) => a.localeCompare(b))',
    ['Apple', 'banana', 'cherry'],
  ),
  v(
    'javascript',
    'a numeric localeCompare',
    '["v10", "v9", "v1"].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }))',
    ['v1', 'v9', 'v10'],
  ),
  v(
    'javascript',
    'a long date',
    'new Date(Date.UTC(2024, 0, 15)).toLocaleDateString("en-US", { year: "numeric", month: "long", day: "numeric" })',
    'January 15, 2024',
  ),
  v('javascript', 'another locale', '(1234.5).toLocaleString("de-DE")', '1.234,5'),
  v('javascript', 'Intl.NumberFormat', 'new Intl.NumberFormat("en-US").format(1234.5)', '1,234.5'),
  v('javascript', 'Intl.ListFormat', 'new Intl.ListFormat("en").format(["a", "b"])', 'a and b'),
  e('javascript', 'a locale tag that is not one', '(1).toLocaleString("not a locale!")', {
    name: 'RangeError',
    message: 'Incorrect locale information provided',
  }),
  e('javascript', 'an import', 'import _ from "lodash";\n_.sum([1, 2])', {
    code: 'SYNTAX_ERROR',
    message: "cannot import 'lodash'",
  }),
  e('javascript', 'require', 'const fs = require("fs");\nfs.readFileSync("/etc/passwd", "utf8")', {
    name: 'ReferenceError',
    message: 'require is not defined',
  }),
  e('javascript', 'a tool called as a global', 'await getWeather({})', {
    name: 'ReferenceError',
    message: 'tools.getWeather(...)',
  }),
  v(
    'javascript',
    'async main called last',
    'async function main() {\n  const w = await tools.getWeather({});\n  return w.temp;\n}\nmain();',
    72,
  ),
  v(
    'typescript',
    'typed helper and a fenced block',
    '```ts\nconst f = (n: number): string => n.toFixed(1);\nf(await tools.add({ a: 1, b: 1 }))\n```',
    '2.0',
  ),
];
