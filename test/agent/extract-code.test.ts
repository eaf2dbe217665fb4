import { describe, expect, it } from 'vitest';
import { extractCode } from '../../src/agent/extract-code.ts';

const code = (text: string) => ({ kind: 'code', code: text });
const answer = (text: string) => ({ kind: 'answer', text });

describe('extractCode: fenced blocks', () => {
  it('takes the code of a js, ts, python or unlabelled block and ignores the prose around it', () => {
    const js = 'const w = await tools.get_weather({ city: "Paris" });\nreturn w.sky;';
    expect(
      extractCode(`Let me check.\n\n\`\`\`js\n${js}\n\`\`\`\n\nThis prints the sky.`, 'javascript'),
    ).toEqual(code(js));
    expect(extractCode(`\`\`\`typescript\nconst n: number = 1;\n\`\`\``, 'typescript')).toEqual(
      code('const n: number = 1;'),
    );
    expect(extractCode('```TS\nreturn 1;\n```', 'typescript')).toEqual(code('return 1;'));
    expect(extractCode('```python\nw = tools.get_weather(city="Paris")\nprint(w)\n```', 'python')).toEqual(
      code('w = tools.get_weather(city="Paris")\nprint(w)'),
    );
    expect(extractCode('```py title="run"\nprint(1)\n```', 'python')).toEqual(code('print(1)'));
    expect(extractCode('Here:\n```\nreturn 42;\n```', 'javascript')).toEqual(code('return 42;'));
    expect(extractCode('```\nprint(42)\n```', 'python')).toEqual(code('print(42)'));
  });

  it('joins several blocks with a blank line, in order, and keeps their indentation', () => {
    const reply = [
      'First the weather:',
      '```python',
      'w = tools.get_weather(city="Paris")',
      '```',
      'Then the loop:',
      '```python3',
      '',
      'for k in w:',
      '    print(k)',
      '',
      '```',
    ].join('\n');
    expect(extractCode(reply, 'python')).toEqual(
      code('w = tools.get_weather(city="Paris")\n\nfor k in w:\n    print(k)'),
    );
    expect(extractCode('```js\nconst a = 1;\n```\ntext\n```tsx\nconst b = 2;\n```', 'typescript')).toEqual(
      code('const a = 1;\n\nconst b = 2;'),
    );
  });

  it('ignores blocks in other languages', () => {
    const reply = [
      'The tool returns:',
      '```json',
      '{ "temp": 14 }',
      '```',
      '```javascript',
      'const w = await tools.get_weather({ city: "Paris" });',
      '```',
      '```bash',
      'npm test',
      '```',
      '```output',
      'cloudy',
      '```',
    ].join('\n');
    expect(extractCode(reply, 'javascript')).toEqual(
      code('const w = await tools.get_weather({ city: "Paris" });'),
    );
    // The python task's code is in the python block; the js one is another language there.
    expect(extractCode('```js\nconsole.log(1)\n```\n```py\nprint(1)\n```', 'python')).toEqual(
      code('print(1)'),
    );
    // Only other languages (or empty blocks): the reply is the answer, as written.
    const only = 'The result:\n```json\n{ "temp": 14 }\n```\n';
    expect(extractCode(only, 'javascript')).toEqual(answer(only.trim()));
    expect(extractCode('```js\n\n```', 'javascript')).toEqual(answer('```js\n\n```'));
  });

  it('accepts ~~~ fences, longer fences and fences inside a list item', () => {
    expect(extractCode('~~~ts\nconst x = 1;\n~~~', 'typescript')).toEqual(code('const x = 1;'));
    expect(extractCode('~~~\nprint(1)\n~~~', 'python')).toEqual(code('print(1)'));
    // A shorter run or the other fence character does not close the block.
    expect(extractCode('````js\nconst s = `\n```\n~~~\n`;\n````', 'javascript')).toEqual(
      code('const s = `\n```\n~~~\n`;'),
    );
    expect(extractCode('1. Run this:\n   ```js\n   const a = 1;\n     a + 1;\n   ```', 'javascript')).toEqual(
      code('const a = 1;\n  a + 1;'),
    );
    // Backticks within the line of a backtick fence make it inline code, not a fence.
    expect(extractCode('```js `x` ``` reads as code', 'javascript')).toEqual(
      answer('```js `x` ``` reads as code'),
    );
  });

  it('keeps the code of a fence left open at the end of the reply (a model cut off)', () => {
    expect(
      extractCode('Sure:\n```js\nconst w = await tools.get_weather({ city: "Paris" });\n', 'javascript'),
    ).toEqual(code('const w = await tools.get_weather({ city: "Paris" });'));
    expect(extractCode('```js\nconst a = 1;\n```\n```python\nprint(1)', 'python')).toEqual(code('print(1)'));
  });

  it('handles CRLF line ends', () => {
    expect(extractCode('```py\r\nx = 1\r\nprint(x)\r\n```\r\n', 'python')).toEqual(code('x = 1\nprint(x)'));
  });
});

describe('extractCode: replies without a fence', () => {
  it('takes a plain JavaScript or TypeScript program as code', () => {
    const js = 'const w = await tools.get_weather({ city: "Paris" });\nreturn { sky: w.sky };';
    expect(extractCode(`\n${js}\n\n`, 'javascript')).toEqual(code(js));
    expect(extractCode('console.log(await tools.list())', 'javascript')).toEqual(
      code('console.log(await tools.list())'),
    );
    expect(extractCode('final_answer("Paris")', 'javascript')).toEqual(code('final_answer("Paris")'));
    expect(extractCode('let total = 0;\nfor (const x of [1, 2]) total += x;', 'javascript')).toEqual(
      code('let total = 0;\nfor (const x of [1, 2]) total += x;'),
    );
    const ts =
      'const w: { sky: string } = await tools.get_weather({ city: "Paris" });\nreturn w.sky as string;';
    expect(extractCode(ts, 'typescript')).toEqual(code(ts));
    // Types are not JavaScript.
    expect(extractCode('const n: number = 1;', 'javascript')).toEqual(answer('const n: number = 1;'));
  });

  it('keeps prose as the answer, trimmed, even when it happens to parse', () => {
    for (const language of ['javascript', 'typescript', 'python'] as const) {
      expect(extractCode('  Paris\n', language)).toEqual(answer('Paris'));
      expect(extractCode('42', language)).toEqual(answer('42'));
      expect(extractCode('"Paris"', language)).toEqual(answer('"Paris"'));
      expect(extractCode('The answer is 42.', language)).toEqual(answer('The answer is 42.'));
      expect(extractCode('true', language)).toEqual(answer('true'));
      expect(extractCode('', language)).toEqual(answer(''));
    }
    const prose =
      'It is cloudy in Paris today, with a temperature of 14 °C.\nTokyo is clear (21 °C).\n\nLet me know if you need more.';
    expect(extractCode(prose, 'javascript')).toEqual(answer(prose));
    expect(extractCode(prose, 'python')).toEqual(answer(prose));
    // Expressions that do nothing: a label, a division, a spaced "call", an array.
    expect(extractCode('Answer: Paris', 'javascript')).toEqual(answer('Answer: Paris'));
    expect(extractCode('N/A', 'typescript')).toEqual(answer('N/A'));
    expect(extractCode('Paris (France)', 'javascript')).toEqual(answer('Paris (France)'));
    expect(extractCode('[14, 21, 18]', 'javascript')).toEqual(answer('[14, 21, 18]'));
    expect(extractCode('{"city": "Paris"}', 'typescript')).toEqual(answer('{"city": "Paris"}'));
  });

  it('takes a plain Python program as code when no line reads as a sentence', () => {
    const py = [
      'import json',
      '',
      '# look up every city',
      'cities = ["Paris", "Tokyo"]',
      'results = {}',
      'for city in cities:  # one call each',
      '    results[city] = tools.get_weather(city=city)',
      'if not results:',
      '    raise ValueError("no weather at all")',
      'final_answer(json.dumps(results))',
    ].join('\n');
    expect(extractCode(py, 'python')).toEqual(code(py));
    expect(extractCode('print(tools.get_weather(city="Paris"))', 'python')).toEqual(
      code('print(tools.get_weather(city="Paris"))'),
    );
    expect(extractCode('def f(x):\n    return x * 2\n\nprint(f(21))', 'python')).toEqual(
      code('def f(x):\n    return x * 2\n\nprint(f(21))'),
    );
    expect(extractCode('a, b = 1, 2\ntotal += a', 'python')).toEqual(code('a, b = 1, 2\ntotal += a'));
    // A sentence among code lines makes the reply prose.
    const mixed = 'I will check the weather first.\nw = tools.get_weather(city="Paris")';
    expect(extractCode(mixed, 'python')).toEqual(answer(mixed));
    expect(extractCode('Let me compute: x = 5', 'python')).toEqual(answer('Let me compute: x = 5'));
  });
});
