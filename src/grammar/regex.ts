/**
 * A regex subset (ECMAScript syntax, as JSON Schema's `pattern` uses) parsed into the IR over characters:
 * literals, escapes (\d \w \s \D \W \S \uXXXX \xXX \t \n ...), classes, `.`, groups (capturing, (?:), named),
 * alternation, greedy or lazy quantifiers (* + ? {n} {n,} {n,m}), and ^ / $ at a branch's ends. An unanchored
 * pattern matches anywhere (`.*` around it). Backreferences, lookaround and \b are not regular and are refused.
 */
import { ANY_CHAR, charRanges, negate, single, union } from './char-class.ts';
import type { CharRanges } from './char-class.ts';
import { alt, chars, EMPTY, rep, seq } from './ir.ts';
import type { Expr } from './ir.ts';

export class RegexUnsupported extends Error {}

const DIGIT = charRanges([[0x30, 0x39]]);
const WORD = charRanges([
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
]);
// ECMAScript's WhiteSpace and LineTerminator.
const SPACE = charRanges([
  [9, 13],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]);
const DOT = negate(
  charRanges([
    [10, 10],
    [13, 13],
    [0x2028, 0x2029],
  ]),
);
const SIMPLE_ESCAPES: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13, '0': 0 };
/** Most repetitions a bounded quantifier may ask for (a{1,100000} must not build a huge automaton). */
const MAX_COUNT = 1000;

class Parser {
  private pos = 0;
  private readonly cps: number[];
  constructor(source: string) {
    this.cps = Array.from(source, (c) => c.codePointAt(0)!);
  }

  private peek(): string | undefined {
    const cp = this.cps[this.pos];
    return cp === undefined ? undefined : String.fromCodePoint(cp);
  }

  private next(): string {
    const c = this.peek();
    if (c === undefined) throw new RegexUnsupported('unexpected end of pattern');
    this.pos++;
    return c;
  }

  private eat(c: string): boolean {
    if (this.peek() === c) {
      this.pos++;
      return true;
    }
    return false;
  }

  get done(): boolean {
    return this.pos >= this.cps.length;
  }

  /** The whole pattern: top-level branches with their own anchors. */
  pattern(): Expr {
    const branches: Expr[] = [];
    do {
      const anchoredStart = this.eat('^');
      const body = this.sequence(true);
      const anchoredEnd = this.eat('$');
      if (!this.done && this.peek() !== '|') throw new RegexUnsupported(`unexpected ${this.peek()}`);
      const any = rep(chars(ANY_CHAR), 0);
      branches.push(seq(anchoredStart ? EMPTY : any, body, anchoredEnd ? EMPTY : any));
    } while (this.eat('|'));
    return alt(...branches);
  }

  private alternation(): Expr {
    const branches = [this.sequence(false)];
    while (this.eat('|')) branches.push(this.sequence(false));
    return alt(...branches);
  }

  private sequence(topLevel: boolean): Expr {
    const items: Expr[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === '|' || c === ')') break;
      if (c === '$' && topLevel && this.pos === this.cps.length - 1) break;
      if (c === '$' && topLevel && this.cps[this.pos + 1] === 0x7c) break;
      items.push(this.quantified());
    }
    return seq(...items);
  }

  private quantified(): Expr {
    const atom = this.atom();
    let min: number;
    let max: number;
    const c = this.peek();
    if (c === '*') [min, max] = [0, Infinity];
    else if (c === '+') [min, max] = [1, Infinity];
    else if (c === '?') [min, max] = [0, 1];
    else if (c === '{' && this.countAhead()) {
      [min, max] = this.counts();
      this.eat('?');
      return rep(atom, min, max);
    } else return atom;
    this.pos++;
    this.eat('?');
    return rep(atom, min, max);
  }

  private countAhead(): boolean {
    const rest = String.fromCodePoint(...this.cps.slice(this.pos, this.pos + 24));
    return /^\{\d+(,\d*)?\}/.test(rest);
  }

  private counts(): [number, number] {
    const rest = String.fromCodePoint(...this.cps.slice(this.pos, this.pos + 24));
    const m = /^\{(\d+)(,(\d*))?\}/.exec(rest)!;
    this.pos += m[0].length;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
    if (min > MAX_COUNT || (max !== Infinity && max > MAX_COUNT)) {
      throw new RegexUnsupported(`a repetition count over ${MAX_COUNT}`);
    }
    return [min, max];
  }

  private atom(): Expr {
    const c = this.next();
    switch (c) {
      case '(': {
        if (this.eat('?')) {
          if (this.eat(':')) {
            /* non-capturing */
          } else if (
            this.peek() === '<' &&
            !['=', '!'].includes(String.fromCodePoint(this.cps[this.pos + 1] ?? 0))
          ) {
            while (this.next() !== '>') {
              /* a group name */
            }
          } else throw new RegexUnsupported('lookaround');
        }
        const inner = this.alternation();
        if (!this.eat(')')) throw new RegexUnsupported('unclosed group');
        return inner;
      }
      case '[':
        return chars(this.charClass());
      case '.':
        return chars(DOT);
      case '\\':
        return chars(this.escape(false));
      case '^':
      case '$':
        throw new RegexUnsupported('an anchor inside the pattern');
      case ')':
      case '*':
      case '+':
      case '?':
        throw new RegexUnsupported(`unexpected ${c}`);
      default:
        return chars(single(c.codePointAt(0)!));
    }
  }

  private charClass(): CharRanges {
    const negated = this.eat('^');
    const parts: CharRanges[] = [];
    let first = true;
    while (first || this.peek() !== ']') {
      first = false;
      const lo = this.classAtom();
      if (this.peek() === '-' && this.cps[this.pos + 1] !== 0x5d && this.cps[this.pos + 1] !== undefined) {
        this.pos++;
        const hi = this.classAtom();
        const a = lo.length === 2 && lo[0] === lo[1] ? lo[0]! : undefined;
        const b = hi.length === 2 && hi[0] === hi[1] ? hi[0]! : undefined;
        if (a === undefined || b === undefined || a > b) throw new RegexUnsupported('a bad class range');
        parts.push([a, b]);
      } else parts.push(lo);
    }
    this.next();
    const set = union(...parts);
    return negated ? negate(set) : set;
  }

  private classAtom(): CharRanges {
    const c = this.next();
    if (c === '\\') return this.escape(true);
    return single(c.codePointAt(0)!);
  }

  private escape(inClass: boolean): CharRanges {
    const c = this.next();
    switch (c) {
      case 'd':
        return DIGIT;
      case 'D':
        return negate(DIGIT);
      case 'w':
        return WORD;
      case 'W':
        return negate(WORD);
      case 's':
        return SPACE;
      case 'S':
        return negate(SPACE);
      case 'u': {
        if (this.eat('{')) {
          let hex = '';
          while (!this.eat('}')) hex += this.next();
          return single(parseInt(hex, 16));
        }
        return single(this.hex(4));
      }
      case 'x':
        return single(this.hex(2));
      case 'c':
        return single(this.next().codePointAt(0)! % 32);
      case 'b':
        if (inClass) return single(8);
        throw new RegexUnsupported('\\b');
      case 'B':
        throw new RegexUnsupported('\\B');
      case 'p':
      case 'P':
        throw new RegexUnsupported('a Unicode property class');
      default:
        if (c in SIMPLE_ESCAPES) return single(SIMPLE_ESCAPES[c]!);
        if (/[1-9]/.test(c)) throw new RegexUnsupported('a backreference');
        if (/[a-zA-Z]/.test(c)) throw new RegexUnsupported(`the escape \\${c}`);
        return single(c.codePointAt(0)!);
    }
  }

  private hex(n: number): number {
    let s = '';
    for (let i = 0; i < n; i++) s += this.next();
    if (!/^[0-9a-fA-F]+$/.test(s)) throw new RegexUnsupported(`a bad escape ${s}`);
    return parseInt(s, 16);
  }
}

/** The characters a pattern matches, as an IR expression over characters (not yet JSON-encoded). */
export function parseRegex(source: string): Expr {
  const parser = new Parser(source);
  const expr = parser.pattern();
  if (!parser.done) throw new RegexUnsupported('trailing input');
  return expr;
}
