/**
 * A byte-by-byte JSON syntax check that also knows whether it is inside an object key: the reply validator's
 * fallback once a schema's declared property order is not the one the model chose (ADR 0057). Bounded: one
 * entry per open container, capped so a hostile reply cannot grow it without end.
 */
const MAX_DEPTH = 10_000;

type Mode =
  | 'value'
  | 'array-first'
  | 'object-first'
  | 'object-next'
  | 'after-key'
  | 'after-value'
  | 'string'
  | 'escape'
  | 'unicode'
  | 'number'
  | 'literal';

/** Number sub-states; the terminal ones may end the number. */
type NumberState = 'minus' | 'zero' | 'int' | 'dot' | 'frac' | 'e' | 'e-sign' | 'exp';
const NUMBER_ENDS = new Set<NumberState>(['zero', 'int', 'frac', 'exp']);

const isWs = (b: number): boolean => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
const isDigit = (b: number): boolean => b >= 0x30 && b <= 0x39;
const isHex = (b: number): boolean => isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);

export class JsonKeyTracker {
  #mode: Mode = 'value';
  readonly #stack: number[] = [];
  #stringIsKey = false;
  #hexLeft = 0;
  #number: NumberState = 'int';
  #literal = '';
  #failed = false;

  /** Whether the last byte pushed is inside an object key (its quotes included). */
  inKey = false;

  /** A whole value was read (only whitespace may follow). */
  get complete(): boolean {
    if (this.#failed || this.#stack.length > 0) return false;
    return this.#mode === 'after-value' || (this.#mode === 'number' && NUMBER_ENDS.has(this.#number));
  }

  /** Takes one byte; false (and nothing changes after) when JSON cannot have it there. */
  push(byte: number): boolean {
    if (this.#failed) return false;
    const ok = this.#step(byte);
    if (!ok) this.#failed = true;
    return ok;
  }

  /** What could come next, in the validator's terms. */
  expected(): string[] {
    const top = this.#stack.at(-1);
    const close = top === 0x7b ? `'}'` : `']'`;
    switch (this.#mode) {
      case 'value':
        return ["'{'", "'['", `'"'`, "'-'", "'0'-'9'", "'t'", "'f'", "'n'"];
      case 'array-first':
        return ["']'", "'{'", "'['", `'"'`, "'-'", "'0'-'9'", "'t'", "'f'", "'n'"];
      case 'object-first':
        return [`'"'`, "'}'"];
      case 'object-next':
        return [`'"'`];
      case 'after-key':
        return ["':'"];
      case 'after-value':
        return top === undefined ? ['the end'] : ["','", close];
      case 'string':
        return ['a character', `'"'`];
      case 'escape':
        return [`'"'`, "'\\\\'", "'/'", "'b'", "'f'", "'n'", "'r'", "'t'", "'u'"];
      case 'unicode':
        return ["'0'-'9'", "'a'-'f'", "'A'-'F'"];
      case 'number':
        return NUMBER_ENDS.has(this.#number) ? ["'0'-'9'", "'.'", "'e'", "','", close] : ["'0'-'9'"];
      case 'literal':
        return [`'${this.#literal[0] ?? ''}'`];
    }
  }

  #step(b: number): boolean {
    switch (this.#mode) {
      case 'string':
        if (b === 0x22) {
          this.#mode = this.#stringIsKey ? 'after-key' : 'after-value';
          return true;
        }
        if (b === 0x5c) this.#mode = 'escape';
        return b >= 0x20;
      case 'escape':
        if (b === 0x75) {
          this.#mode = 'unicode';
          this.#hexLeft = 4;
          return true;
        }
        this.#mode = 'string';
        return [0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74].includes(b);
      case 'unicode':
        if (--this.#hexLeft === 0) this.#mode = 'string';
        return isHex(b);
      case 'literal':
        if (b !== this.#literal.charCodeAt(0)) return false;
        this.#literal = this.#literal.slice(1);
        if (this.#literal === '') this.#mode = 'after-value';
        return true;
      case 'number':
        return this.#numberStep(b);
      default:
        break;
    }
    if (isWs(b)) return true;
    this.inKey = false;
    switch (this.#mode) {
      case 'after-key':
        if (b !== 0x3a) return false;
        this.#mode = 'value';
        return true;
      case 'object-first':
      case 'object-next':
        if (b === 0x7d && this.#mode === 'object-first') return this.#close(0x7b);
        if (b !== 0x22) return false;
        this.#mode = 'string';
        this.#stringIsKey = true;
        this.inKey = true;
        return true;
      case 'after-value': {
        const top = this.#stack.at(-1);
        if (top === undefined) return false;
        if (b === 0x2c) {
          this.#mode = top === 0x7b ? 'object-next' : 'value';
          return true;
        }
        return b === (top === 0x7b ? 0x7d : 0x5d) && this.#close(top);
      }
      case 'array-first':
        if (b === 0x5d) return this.#close(0x5b);
        return this.#value(b);
      default:
        return this.#value(b);
    }
  }

  #value(b: number): boolean {
    if (b === 0x7b || b === 0x5b) {
      if (this.#stack.length >= MAX_DEPTH) return false;
      this.#stack.push(b);
      this.#mode = b === 0x7b ? 'object-first' : 'array-first';
      return true;
    }
    if (b === 0x22) {
      this.#mode = 'string';
      this.#stringIsKey = false;
      return true;
    }
    if (b === 0x2d || isDigit(b)) {
      this.#mode = 'number';
      this.#number = b === 0x2d ? 'minus' : b === 0x30 ? 'zero' : 'int';
      return true;
    }
    const literal = b === 0x74 ? 'rue' : b === 0x66 ? 'alse' : b === 0x6e ? 'ull' : null;
    if (literal === null) return false;
    this.#mode = 'literal';
    this.#literal = literal;
    return true;
  }

  #close(open: number): boolean {
    this.#stack.pop();
    this.#mode = 'after-value';
    return open === 0x7b || open === 0x5b;
  }

  #numberStep(b: number): boolean {
    const s = this.#number;
    const digit = isDigit(b);
    const next: NumberState | null =
      s === 'minus'
        ? digit
          ? b === 0x30
            ? 'zero'
            : 'int'
          : null
        : s === 'zero' || s === 'int'
          ? ((digit && s === 'int' ? 'int' : null) ??
            (b === 0x2e ? 'dot' : b === 0x65 || b === 0x45 ? 'e' : null))
          : s === 'dot' || s === 'frac'
            ? digit
              ? 'frac'
              : s === 'frac' && (b === 0x65 || b === 0x45)
                ? 'e'
                : null
            : s === 'e'
              ? digit
                ? 'exp'
                : b === 0x2b || b === 0x2d
                  ? 'e-sign'
                  : null
              : digit
                ? 'exp'
                : null;
    if (next !== null) {
      this.#number = next;
      return true;
    }
    if (!NUMBER_ENDS.has(s)) return false;
    this.#mode = 'after-value';
    return this.#step(b);
  }
}
