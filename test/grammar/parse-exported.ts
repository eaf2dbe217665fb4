/**
 * Reads back the GBNF and Lark text the exports write (their subset only), into the IR: a test parses what was
 * printed and checks the grammar accepts the same inputs, so escaping and grouping mistakes show up.
 */
import { charRanges, negate } from '../../src/grammar/char-class.ts';
import { alt, chars, EMPTY, lit, ref, rep, seq } from '../../src/grammar/ir.ts';
import type { Expr, Grammar } from '../../src/grammar/ir.ts';

type Flavor = 'gbnf' | 'lark';

class Reader {
  pos = 0;
  constructor(
    readonly text: string,
    readonly flavor: Flavor,
  ) {}

  private skip(): void {
    while (this.text[this.pos] === ' ') this.pos++;
  }

  private escape(): number {
    const c = this.text[this.pos++]!;
    const hex = (n: number) => {
      const v = parseInt(this.text.slice(this.pos, this.pos + n), 16);
      this.pos += n;
      return v;
    };
    if (c === 'n') return 10;
    if (c === 'r') return 13;
    if (c === 't') return 9;
    if (c === 'x' && this.text[this.pos] === '{') {
      const end = this.text.indexOf('}', this.pos);
      const v = parseInt(this.text.slice(this.pos + 1, end), 16);
      this.pos = end + 1;
      return v;
    }
    if (c === 'x') return hex(2);
    if (c === 'u') return hex(4);
    if (c === 'U') return hex(8);
    return c.codePointAt(0)!;
  }

  private char(): number {
    const c = this.text.codePointAt(this.pos)!;
    this.pos += c > 0xffff ? 2 : 1;
    return c === 0x5c ? this.escape() : c;
  }

  private charClass(): Expr {
    this.pos++; // [
    const negated = this.text[this.pos] === '^';
    if (negated) this.pos++;
    const pairs: [number, number][] = [];
    while (this.text[this.pos] !== ']') {
      const lo = this.char();
      if (this.text[this.pos] === '-' && this.text[this.pos + 1] !== ']') {
        this.pos++;
        pairs.push([lo, this.char()]);
      } else pairs.push([lo, lo]);
    }
    this.pos++;
    const set = charRanges(pairs);
    return chars(negated ? negate(set) : set);
  }

  private atom(): Expr {
    this.skip();
    const c = this.text[this.pos]!;
    if (c === '"') {
      this.pos++;
      let s = '';
      while (this.text[this.pos] !== '"') s += String.fromCodePoint(this.char());
      this.pos++;
      return lit(s);
    }
    if (c === '(') {
      this.pos++;
      const inner = this.alternation();
      this.skip();
      this.pos++; // )
      return inner;
    }
    if (c === '[') return this.charClass();
    if (c === '/') {
      this.pos++;
      const cls = this.charClass();
      this.pos++; // /
      return cls;
    }
    const name = /^[a-zA-Z0-9_-]+/.exec(this.text.slice(this.pos))![0];
    this.pos += name.length;
    return ref(name.replace(/-/g, '_'));
  }

  private postfix(): Expr {
    let item = this.atom();
    for (;;) {
      const c = this.text[this.pos];
      if (c === '*') item = rep(item, 0);
      else if (c === '+') item = rep(item, 1);
      else if (c === '?') item = rep(item, 0, 1);
      else if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.text.slice(this.pos))!;
        this.pos += m[0].length;
        const min = Number(m[1]);
        item = rep(item, min, m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]));
        continue;
      } else return item;
      this.pos++;
    }
  }

  private sequence(): Expr {
    const items: Expr[] = [];
    for (;;) {
      this.skip();
      const c = this.text[this.pos];
      if (c === undefined || c === '|' || c === ')' || c === '\n') return seq(...items);
      items.push(this.postfix());
    }
  }

  alternation(): Expr {
    const options = [this.sequence()];
    while (this.text[this.pos] === '|') {
      this.pos++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0]! : alt(...options);
  }
}

export function parseExported(text: string, flavor: Flavor): Grammar {
  const rules = new Map<string, Expr>();
  const defined = flavor === 'gbnf' ? ' ::= ' : ': ';
  for (const line of text.split('\n').filter(Boolean)) {
    const at = line.indexOf(defined);
    const name = line.slice(0, at).replace(/-/g, '_');
    const reader = new Reader(line.slice(at + defined.length), flavor);
    const body = reader.alternation();
    rules.set(name, body === EMPTY ? EMPTY : body);
  }
  return { root: flavor === 'gbnf' ? 'root' : 'start', rules };
}
