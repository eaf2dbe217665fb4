import { jsonrepair } from 'jsonrepair';
import { isRecord } from '../spec/is-record.ts';

export type ParsedArguments =
  | { readonly ok: true; readonly args: Record<string, unknown>; readonly repaired: boolean }
  | { readonly ok: false; readonly code: 'TOOL_VALIDATION'; readonly message: string };

const ASK = 'send a JSON object matching the schema';

/**
 * Parses a tool call's JSON arguments: JSON.parse; if that fails, a repair with `jsonrepair` is used only when it
 * is unambiguous; the result must be a JSON object (an empty or all-whitespace string means `{}`).
 *
 * A repair is unambiguous when the text, read in the small dialect below, says exactly one object, and jsonrepair,
 * given the text with the brackets that truncation left open closed, repairs it to that same object (deep equality).
 * When the two disagree the arguments are refused: jsonrepair's heuristics misread a few texts (it throws on the
 * valid `{"a":{"b":"{"},"c":""}`), and a guess is worse than asking the model again. The dialect is JSON plus only
 * these deviations:
 *
 * - the whole text wrapped in a Markdown code fence (```` ```json ... ``` ````, any or no language tag);
 * - comments (`// ...` to the end of the line, and closed `/* ... *\/`) wherever whitespace may go;
 * - one trailing comma before `}` or `]`;
 * - single-quoted strings, and `\'` as an escape in any string;
 * - unquoted property names that are identifiers (`[A-Za-z_$][A-Za-z0-9_$]*`);
 * - Python's `True`, `False` and `None` as values;
 * - raw control characters (a literal newline, a tab) inside strings, taken as they are;
 * - missing closing `}`/`]` at the very end of the text (truncation after a complete value, a comma or an
 *   opening bracket).
 *
 * Everything else is refused, since a repair would have to guess content: text before the `{` (a leading comment
 * included) or after the object, several JSON values, unquoted string values (`{a: hello}`), `NaN`, `Infinity`,
 * `undefined`, numbers outside JSON's syntax (`01`, `.5`, `2.`, `+1`, `0x1`), unknown escapes, missing commas or
 * colons, extra or mismatched brackets, string concatenation, function wrappers (`ObjectId("x")`), ellipses,
 * typographic quotes, escaped JSON (`{\"a\":1}`), and text cut off inside a string, after a property name or after
 * a colon. A text cut after a number is accepted as it stands, since the number is complete as JSON.
 */
export function parseToolArguments(text: string): ParsedArguments {
  if (text.trim() === '') return { ok: true, args: {}, repaired: false };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return repair(text, (error as Error).message);
  }
  if (!isRecord(parsed)) {
    return fail(`arguments must be a JSON object, not ${describeJsonType(parsed)}; ${ASK}`);
  }
  return { ok: true, args: parsed, repaired: false };
}

function fail(message: string): ParsedArguments {
  return { ok: false, code: 'TOOL_VALIDATION', message };
}

function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

const FENCE = /^(```[A-Za-z0-9_+-]*[ \t]*\r?\n)([\s\S]*?)\r?\n[ \t]*```$/;

function repair(text: string, parseError: string): ParsedArguments {
  const notJson = `arguments are not valid JSON (${parseError})`;
  const trimmed = text.trim();
  const fenced = FENCE.exec(trimmed);
  const inner = fenced ? (fenced[2] ?? '') : trimmed;
  // Positions in messages count from the start of `text`, like JSON.parse's.
  const offset = text.indexOf(trimmed) + (fenced ? (fenced[1] ?? '').length : 0);
  const reader = new DialectReader(inner);
  let value: Record<string, unknown>;
  try {
    value = reader.readDocument();
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return fail(`${notJson}; not repaired: ${error.describe(`position ${offset + error.position}`)}; ${ASK}`);
  }
  let repaired: unknown;
  try {
    // The reader knows which brackets truncation left open; closing them first keeps jsonrepair from guessing
    // where a cut-off text ended (it would re-read `["["` as nested arrays). After a newline, not in a comment.
    const closed = reader.missingClosers === '' ? inner : `${inner}\n${reader.missingClosers}`;
    repaired = JSON.parse(jsonrepair(closed));
  } catch {
    repaired = undefined;
  }
  if (!jsonEqual(repaired, value)) {
    return fail(`${notJson}; not repaired: it cannot be repaired without guessing; ${ASK}`);
  }
  return { ok: true, args: value, repaired: true };
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = Object.keys(ra);
  if (keys.length !== Object.keys(rb).length) return false;
  return keys.every((key) => Object.hasOwn(rb, key) && jsonEqual(ra[key], rb[key]));
}

/** Why the dialect reader refused; `describe` gets `position N` counted from the start of the original text. */
class Refusal extends Error {
  constructor(
    readonly describe: (at: string) => string,
    readonly position: number,
  ) {
    super('refused');
  }
}

function unclosedString(start: number): Refusal {
  return new Refusal((at) => `the string starting at ${at} is not closed; it looks truncated`, start);
}

/** Deep enough for any real arguments, shallow enough that reading never exhausts the stack. */
const MAX_DEPTH = 256;

const WORDS: Readonly<Record<string, unknown>> = {
  true: true,
  false: false,
  null: null,
  True: true,
  False: false,
  None: null,
};

const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  "'": "'",
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const IDENTIFIER_START = /[A-Za-z_$]/;
const IDENTIFIER_PART = /[A-Za-z0-9_$]/;

/** Reads the dialect documented on `parseToolArguments`; throws a Refusal for anything outside it. */
class DialectReader {
  private pos = 0;
  /** The `}` and `]` the text lacks at its end, innermost first. */
  missingClosers = '';

  constructor(private readonly text: string) {}

  readDocument(): Record<string, unknown> {
    while (/^[ \t\n\r]$/.test(this.text[this.pos] ?? '')) this.pos++;
    if (this.text[this.pos] !== '{') {
      throw new Refusal(() => 'the arguments must be one JSON object, starting with "{"', this.pos);
    }
    const value = this.readObject(1);
    this.skipSpace();
    if (this.pos < this.text.length)
      throw new Refusal((at) => `text follows the JSON object at ${at}`, this.pos);
    return value;
  }

  private atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  private skipSpace(): void {
    const { text } = this;
    while (this.pos < text.length) {
      const c = text[this.pos];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
        this.pos++;
      } else if (text.startsWith('//', this.pos)) {
        const end = text.indexOf('\n', this.pos);
        this.pos = end === -1 ? text.length : end + 1;
      } else if (text.startsWith('/*', this.pos)) {
        const end = text.indexOf('*/', this.pos + 2);
        if (end === -1) throw new Refusal((at) => `the /* comment at ${at} is not closed`, this.pos);
        this.pos = end + 2;
      } else {
        return;
      }
    }
  }

  private readValue(depth: number): unknown {
    this.skipSpace();
    if (this.atEnd())
      throw new Refusal(
        (at) => `the text ends at ${at} where a value should be; it looks truncated`,
        this.pos,
      );
    const c = this.text[this.pos] as string;
    if (c === '{') return this.readObject(depth + 1);
    if (c === '[') return this.readArray(depth + 1);
    if (c === '"' || c === "'") return this.readString();
    if (c === '-' || (c >= '0' && c <= '9')) return this.readNumber();
    if (IDENTIFIER_START.test(c)) {
      const start = this.pos;
      const word = this.readIdentifier();
      if (Object.hasOwn(WORDS, word)) return WORDS[word];
      throw new Refusal((at) => `${JSON.stringify(word)} at ${at} is not a JSON value; quote strings`, start);
    }
    throw new Refusal((at) => `unexpected character ${JSON.stringify(c)} at ${at}`, this.pos);
  }

  private readObject(depth: number): Record<string, unknown> {
    if (depth > MAX_DEPTH)
      throw new Refusal((at) => `the arguments are nested too deeply at ${at}`, this.pos);
    this.pos++; // {
    const out: Record<string, unknown> = {};
    for (;;) {
      this.skipSpace();
      if (this.atEnd()) return this.truncated(out, '}');
      if (this.text[this.pos] === '}') {
        this.pos++;
        return out;
      }
      const key = this.readKey();
      this.skipSpace();
      if (this.atEnd()) {
        throw new Refusal(
          (at) => `the text ends after the property name at ${at}; it looks truncated`,
          this.pos,
        );
      }
      if (this.text[this.pos] !== ':') {
        throw new Refusal((at) => `":" expected after the property name at ${at}`, this.pos);
      }
      this.pos++;
      const value = this.readValue(depth);
      // As JSON.parse does: a `__proto__` key is an own property, not the prototype.
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      this.skipSpace();
      if (this.atEnd()) return this.truncated(out, '}');
      const c = this.text[this.pos];
      if (c === ',') {
        this.pos++;
      } else if (c === '}') {
        this.pos++;
        return out;
      } else {
        throw new Refusal((at) => `"," or "}" expected after the property value at ${at}`, this.pos);
      }
    }
  }

  private readKey(): string {
    const c = this.text[this.pos] as string;
    if (c === '"' || c === "'") return this.readString();
    if (IDENTIFIER_START.test(c)) return this.readIdentifier();
    throw new Refusal((at) => `a property name in double quotes or "}" expected at ${at}`, this.pos);
  }

  private readArray(depth: number): unknown[] {
    if (depth > MAX_DEPTH)
      throw new Refusal((at) => `the arguments are nested too deeply at ${at}`, this.pos);
    this.pos++; // [
    const out: unknown[] = [];
    for (;;) {
      this.skipSpace();
      if (this.atEnd()) return this.truncated(out, ']');
      if (this.text[this.pos] === ']') {
        this.pos++;
        return out;
      }
      out.push(this.readValue(depth));
      this.skipSpace();
      if (this.atEnd()) return this.truncated(out, ']');
      const c = this.text[this.pos];
      if (c === ',') {
        this.pos++;
      } else if (c === ']') {
        this.pos++;
        return out;
      } else {
        throw new Refusal((at) => `"," or "]" expected after the array element at ${at}`, this.pos);
      }
    }
  }

  /** The text ended inside this container: it is closed as if `closer` followed. */
  private truncated<T>(value: T, closer: '}' | ']'): T {
    this.missingClosers += closer;
    return value;
  }

  private readIdentifier(): string {
    const start = this.pos;
    this.pos++;
    while (this.pos < this.text.length && IDENTIFIER_PART.test(this.text[this.pos] as string)) this.pos++;
    return this.text.slice(start, this.pos);
  }

  private readNumber(): number {
    const start = this.pos;
    while (this.pos < this.text.length && /[0-9eE.+\-]/.test(this.text[this.pos] as string)) this.pos++;
    const raw = this.text.slice(start, this.pos);
    if (!NUMBER.test(raw)) throw new Refusal((at) => `${raw} at ${at} is not a JSON number`, start);
    return Number(raw);
  }

  private readString(): string {
    const start = this.pos;
    const quote = this.text[this.pos];
    this.pos++;
    let out = '';
    for (;;) {
      if (this.atEnd()) throw unclosedString(start);
      const c = this.text[this.pos] as string;
      if (c === quote) {
        this.pos++;
        return out;
      }
      if (c !== '\\') {
        out += c;
        this.pos++;
        continue;
      }
      const e = this.text[this.pos + 1];
      if (e === undefined) throw unclosedString(start);
      if (e === 'u') {
        const hex = this.text.slice(this.pos + 2, this.pos + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new Refusal((at) => `invalid \\u escape at ${at}`, this.pos);
        out += String.fromCharCode(parseInt(hex, 16));
        this.pos += 6;
        continue;
      }
      const decoded = ESCAPES[e];
      if (decoded === undefined) throw new Refusal((at) => `invalid escape \\${e} at ${at}`, this.pos);
      out += decoded;
      this.pos += 2;
    }
  }
}
