import fc from 'fast-check';
import { jsonrepair } from 'jsonrepair';
import { describe, expect, it } from 'vitest';
import { parseToolArguments } from '../../src/agent/index.ts';

const ASK = 'send a JSON object matching the schema';

function accepted(text: string): { args: Record<string, unknown>; repaired: boolean } {
  const got = parseToolArguments(text);
  if (!got.ok) throw new Error(`refused ${JSON.stringify(text)}: ${got.message}`);
  return { args: got.args, repaired: got.repaired };
}

function refused(text: string): string {
  const got = parseToolArguments(text);
  if (got.ok) throw new Error(`accepted ${JSON.stringify(text)} as ${JSON.stringify(got.args)}`);
  expect(got.code).toBe('TOOL_VALIDATION');
  expect(got.message.endsWith(`; ${ASK}`)).toBe(true);
  return got.message;
}

describe('parseToolArguments: valid JSON', () => {
  it('returns the object, not repaired', () => {
    expect(parseToolArguments('{"city":"Paris","days":3,"opts":{"exact":true,"tags":["a",null]}}')).toEqual({
      ok: true,
      args: { city: 'Paris', days: 3, opts: { exact: true, tags: ['a', null] } },
      repaired: false,
    });
    expect(accepted('  {\n  "a": 1\n}\n')).toEqual({ args: { a: 1 }, repaired: false });
  });

  it('takes an empty or blank string as {}', () => {
    expect(parseToolArguments('')).toEqual({ ok: true, args: {}, repaired: false });
    expect(parseToolArguments(' \n\t')).toEqual({ ok: true, args: {}, repaired: false });
  });

  it('keeps a __proto__ key an own property', () => {
    const { args } = accepted('{"__proto__": {"polluted": true}}');
    expect(Object.keys(args)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
    const repaired = accepted("{'__proto__': {polluted: true},}");
    expect(repaired.repaired).toBe(true);
    expect(Object.keys(repaired.args)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(repaired.args)).toBe(Object.prototype);
  });

  it.each([
    ['[1, 2]', 'an array'],
    ['42', 'a number'],
    ['"{\\"city\\":\\"Paris\\"}"', 'a string'],
    ['true', 'a boolean'],
    ['null', 'null'],
  ])('refuses JSON that is not an object: %s', (text, what) => {
    expect(refused(text)).toBe(`arguments must be a JSON object, not ${what}; ${ASK}`);
  });
});

describe('parseToolArguments: accepted repairs', () => {
  it.each<[string, string, Record<string, unknown>]>([
    ['a trailing comma', '{"a": 1, "b": [1, 2,],}', { a: 1, b: [1, 2] }],
    ['single quotes', `{'a': 'it\\'s "fine"'}`, { a: 'it\'s "fine"' }],
    ['unquoted keys', '{city: "Paris", $x_1: 2}', { city: 'Paris', $x_1: 2 }],
    ['Python literals', '{"a": True, "b": False, "c": None}', { a: true, b: false, c: null }],
    ['a missing closing brace', '{"a": 1', { a: 1 }],
    ['missing closers after a comma', '{"a": {"b": [1, 2,', { a: { b: [1, 2] } }],
    ['missing closers after an opener', '{"a": [', { a: [] }],
    ['a lone opening brace', '{', {}],
    ['a line comment', '{"a": 1 // the answer\n}', { a: 1 }],
    ['a block comment', '{"a": /* the answer */ 1}', { a: 1 }],
    ['a comment after the object', '{"a": 1}\n// done', { a: 1 }],
    ['a code fence with a language', '```json\n{"a": 1}\n```', { a: 1 }],
    ['a code fence without a language', '\n```\n{a: 1,}\n```\n', { a: 1 }],
    ['raw control characters in strings', '{"code": "line 1\nline 2\tend"}', { code: 'line 1\nline 2\tend' }],
    [
      'several repairs together',
      "```json\n{city: 'Paris', exact: True, // why not\n tags: ['a',],\n```",
      {
        city: 'Paris',
        exact: true,
        tags: ['a'],
      },
    ],
  ])('repairs %s', (_what, text, expected) => {
    expect(accepted(text)).toEqual({ args: expected, repaired: true });
  });
});

describe('parseToolArguments: refused repairs', () => {
  it.each<[string, string, string]>([
    ['free text', 'Paris, please', 'the arguments must be one JSON object, starting with "{"'],
    [
      'an unquoted string value',
      '{"city": Paris}',
      '"Paris" at position 9 is not a JSON value; quote strings',
    ],
    ['concatenated objects', '{"a": 1}{"b": 2}', 'text follows the JSON object at position 8'],
    ['text after the object', '{"a": 1} I hope this helps', 'text follows the JSON object at position 9'],
    ['text before the object', 'Here you go: {"a": 1}', 'must be one JSON object, starting with "{"'],
    ['a leading comment', '/* args */ {"a": 1}', 'must be one JSON object, starting with "{"'],
    ['an array', '[{"a": 1}', 'must be one JSON object, starting with "{"'],
    ['a missing comma', '{"a": 1 "b": 2}', '"," or "}" expected after the property value at position 8'],
    ['a missing colon', '{"a" 1}', '":" expected after the property name at position 5'],
    ['a mismatched bracket', '{"a": [1}', '"," or "]" expected after the array element at position 8'],
    ['an extra closing brace', '{"a": 1}}', 'text follows the JSON object at position 8'],
    [
      'truncation inside a string',
      '{"city": "Par',
      'the string starting at position 9 is not closed; it looks truncated',
    ],
    [
      'truncation after a colon',
      '{"a": 1, "b":',
      'the text ends at position 13 where a value should be; it looks truncated',
    ],
    [
      'truncation after a key',
      '{"a": 1, "b"',
      'the text ends after the property name at position 12; it looks truncated',
    ],
    ['truncation inside a word', '{"a": tr', '"tr" at position 6 is not a JSON value'],
    ['undefined', '{"a": undefined}', '"undefined" at position 6 is not a JSON value'],
    ['NaN', '{"a": NaN}', '"NaN" at position 6 is not a JSON value'],
    ['a leading zero', '{"zip": 01234}', '01234 at position 8 is not a JSON number'],
    ['a bare fraction', '{"a": .5}', 'unexpected character "." at position 6'],
    ['a trailing dot', '{"a": 2.}', '2. at position 6 is not a JSON number'],
    ['an unknown escape', '{"a": "\\x41"}', 'invalid escape \\x at position 7'],
    ['an ellipsis', '{"a": [1, 2, ...]}', 'unexpected character "." at position 13'],
    [
      'string concatenation',
      '{"a": "x" + "y"}',
      '"," or "}" expected after the property value at position 10',
    ],
    ['a function wrapper', '{"id": ObjectId("x")}', '"ObjectId" at position 7 is not a JSON value'],
    ['typographic quotes', '{"a": \u201cx\u201d}', 'unexpected character "\u201c" at position 6'],
    ['escaped JSON', '{\\"a\\": 1}', 'a property name in double quotes or "}" expected at position 1'],
    ['an unclosed comment', '{"a": 1 /* note', 'the /* comment at position 8 is not closed'],
    [
      'an unquoted key that is not an identifier',
      '{my-key: 1}',
      '":" expected after the property name at position 3',
    ],
  ])('refuses %s', (_what, text, reason) => {
    const message = refused(text);
    expect(message).toMatch(/^arguments are not valid JSON \(.+\); not repaired: /);
    expect(message).toContain(reason);
  });

  it('quotes JSON.parse in the message and counts positions from the start of the text', () => {
    expect(refused('{"a": 1 "b": 2}')).toBe(
      `arguments are not valid JSON (Expected ',' or '}' after property value in JSON at position 8); ` +
        `not repaired: "," or "}" expected after the property value at position 8; ${ASK}`,
    );
    expect(refused('  ```json\n{"a": 1 "b": 2}\n```')).toContain(
      'expected after the property value at position 18',
    );
  });

  it('refuses a repair jsonrepair reads differently', () => {
    // jsonrepair throws on `{"a":{"b":"{"},"c":""}`, so it cannot confirm this truncated text.
    expect(refused('{"a":{"b":"{"},"c":""')).toContain(
      'not repaired: it cannot be repaired without guessing',
    );
  });

  it('refuses arguments nested too deeply to read safely', () => {
    expect(refused(`{"a": ${'['.repeat(300)}`)).toContain('nested too deeply');
  });
});

describe('parseToolArguments: properties', () => {
  const objects = fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 8 });

  it('returns exactly o, not repaired, for JSON.stringify(o)', () => {
    fc.assert(
      fc.property(objects, fc.constantFrom(undefined, 2, '\t'), (o, indent) => {
        const text = JSON.stringify(o, null, indent);
        const expected = JSON.parse(text) as unknown; // what JSON itself round-trips (-0 becomes 0)
        expect(parseToolArguments(text)).toEqual({ ok: true, args: expected, repaired: false });
      }),
    );
  });

  it('returns o, repaired, when the closing brackets at the end are cut off', () => {
    fc.assert(
      fc.property(objects, (o) => {
        const text = JSON.stringify(o);
        const cut = text.replace(/[\]}]+$/, '');
        fc.pre(cut !== text);
        expectReadAs(cut, JSON.parse(text), `${cut}\n${text.slice(cut.length)}`);
      }),
    );
  });

  it('returns o, repaired, for o written in the accepted dialect', () => {
    const style = fc.record({
      single: fc.boolean(),
      bare: fc.boolean(),
      trailing: fc.boolean(),
      python: fc.boolean(),
      comments: fc.boolean(),
      cut: fc.boolean(),
    });
    fc.assert(
      fc.property(objects, style, (o, st) => {
        const full = renderDialect(o, st);
        const text = st.cut ? full.replace(/[\]}]+$/, '') : full;
        const closers = full.slice(text.length);
        expectReadAs(text, JSON.parse(JSON.stringify(o)), closers === '' ? text : `${text}\n${closers}`);
      }),
    );
  });

  it('never throws, whatever the text', () => {
    const damaged = fc
      .tuple(objects, fc.nat(), fc.nat({ max: 4 }), fc.string({ maxLength: 3 }))
      .map(([o, at, drop, insert]) => {
        const text = JSON.stringify(o);
        const i = at % (text.length + 1);
        return text.slice(0, i) + insert + text.slice(i + drop);
      });
    fc.assert(
      fc.property(fc.oneof(fc.string(), damaged), (text) => {
        const got = parseToolArguments(text);
        if (got.ok) expect(typeof got.args).toBe('object');
        else expect(got.message).toMatch(/send a JSON object matching the schema$/);
      }),
    );
  });
});

/**
 * `text` must be read as `expected`, or be refused only because jsonrepair reads `closed` (the text with its
 * missing closers) differently: jsonrepair has heuristics that misread some texts (it throws on the valid
 * `{"a":{"b":"{"},"c":""}`), and a disagreement is refused rather than guessed.
 */
function expectReadAs(text: string, expected: unknown, closed: string): void {
  const got = parseToolArguments(text);
  if (got.ok) {
    expect(got.args).toEqual(expected);
    expect(got.repaired).toBe(!isJson(text));
    return;
  }
  expect(got.message).toContain('not repaired: it cannot be repaired without guessing');
  let theirs: unknown;
  try {
    theirs = JSON.parse(jsonrepair(closed));
  } catch {
    theirs = undefined;
  }
  expect(theirs).not.toEqual(expected);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

interface DialectStyle {
  single: boolean;
  bare: boolean;
  trailing: boolean;
  python: boolean;
  comments: boolean;
}

/** Writes a JSON value using the dialect's deviations that `style` selects. */
function renderDialect(value: unknown, style: DialectStyle): string {
  const quote = (s: string): string => {
    const json = JSON.stringify(s);
    if (!style.single) return json;
    return `'${json.slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
  };
  const sep = style.comments ? ', /* next */ ' : ', ';
  const tail = (n: number): string => (style.trailing && n > 0 ? ',' : '');
  if (value === null) return style.python ? 'None' : 'null';
  if (value === true) return style.python ? 'True' : 'true';
  if (value === false) return style.python ? 'False' : 'false';
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number') return JSON.stringify(value);
  if (Array.isArray(value)) {
    return `[${value.map((v) => renderDialect(v, style)).join(sep)}${tail(value.length)}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const key = (k: string): string => (style.bare && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : quote(k));
  const body = entries.map(([k, v]) => `${key(k)}: ${renderDialect(v, style)}`).join(sep);
  return `{${body}${tail(entries.length)}}`;
}
