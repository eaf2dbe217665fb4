/**
 * The state of one schema's compilation: its rules, the issues found, the rules of $ref targets (so recursion is
 * a rule calling itself), and the whitespace policy.
 */
import { CodecallError } from '../errors/index.ts';
import { alt, EMPTY, exprSize, lit, ref, rep, seq } from './ir.ts';
import type { Expr } from './ir.ts';
import { charRanges } from './char-class.ts';
import { chars } from './ir.ts';
import { ANY_JSON_CHAR } from './json-string.ts';
import { ANY_NUMBER } from './numbers.ts';
import type { GrammarIssue } from './report.ts';
import { SchemaIndex } from './refs.ts';
import type { RefTarget } from './refs.ts';

export type WhitespacePolicy = 'compact' | 'flexible';

const WS_CHARS = charRanges([
  [9, 10],
  [13, 13],
  [32, 32],
]);

export class CompileContext {
  readonly rules = new Map<string, Expr>();
  readonly issues: GrammarIssue[] = [];
  readonly refRules = new Map<string, string>();
  readonly regexRules = new Map<string, string>();
  readonly keyRules = new Map<string, string>();
  // The fixed rules' names are taken from the start: a property called "value" must not become the any-value rule.
  private readonly used = new Set<string>(['ws', 'root', 'start', 'char', 'value']);
  private readonly nextSuffix = new Map<string, number>();
  depth = 0;
  /** Compiles a subschema (schema-compile.ts sets it: the type compilers call back without an import cycle). */
  compile: (schema: unknown, path: string) => Expr = () => {
    throw new Error('CompileContext.compile is not set');
  };

  readonly index: SchemaIndex;
  /** The base URI of the schema being compiled, innermost last. */
  readonly bases: string[];

  constructor(
    readonly root: unknown,
    readonly whitespace: WhitespacePolicy,
    documents: Readonly<Record<string, unknown>> = {},
  ) {
    this.index = new SchemaIndex(root, documents);
    this.bases = [this.index.rootBase];
  }

  /** A $ref read against the schema being compiled. */
  resolve(ref: string): RefTarget | undefined {
    return this.index.resolve(ref, this.bases[this.bases.length - 1]);
  }

  report(keyword: string, path: string, reason: string): void {
    this.issues.push({ keyword, path, reason });
  }

  /** A fresh rule name from a hint: lowercase letters, digits and underscores (valid in GBNF and Lark). */
  name(hint: string): string {
    const base =
      hint
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '_')
        .replace(/^_+|_+$/g, '')
        .slice(0, 40) || 'rule';
    const stem = /^[a-z]/.test(base) ? base : `r_${base}`;
    let name = stem;
    // A counter per stem: probing _2, _3, ... from the start each time is quadratic in a schema of a thousand keys.
    let i = this.nextSuffix.get(stem) ?? 2;
    while (this.used.has(name) || name === 'ws' || name === 'root' || name === 'start')
      name = `${stem}_${i++}`;
    this.nextSuffix.set(stem, i);
    this.used.add(name);
    return name;
  }

  /** `expr` itself when small, else a rule of it: an expression written twice must not double at every level. */
  share(expr: Expr, hint: string): Expr {
    return exprSize(expr, 24) <= 24 ? expr : this.define(this.name(hint), expr);
  }

  define(name: string, body: Expr): Expr {
    this.rules.set(name, body);
    return ref(name);
  }

  /** Whitespace between tokens: nothing (compact) or any JSON whitespace (flexible). */
  get ws(): Expr {
    if (this.whitespace === 'compact') return EMPTY;
    if (!this.rules.has('ws')) this.rules.set('ws', rep(chars(WS_CHARS), 0));
    return ref('ws');
  }

  /** The separator between members and items. */
  get comma(): Expr {
    return seq(this.ws, lit(','), this.ws);
  }

  /** A shared rule for one character of an unconstrained string. */
  get stringChar(): Expr {
    if (!this.rules.has('char')) this.rules.set('char', ANY_JSON_CHAR);
    this.used.add('char');
    return ref('char');
  }

  /** Any JSON value (a `true` schema). */
  get anyValue(): Expr {
    if (this.rules.has('value')) return ref('value');
    this.used.add('value');
    this.rules.set('value', EMPTY);
    const value = ref('value');
    const str = seq(lit('"'), rep(this.stringChar, 0), lit('"'));
    const member = seq(str, this.ws, lit(':'), this.ws, value);
    const object = seq(
      lit('{'),
      this.ws,
      rep(seq(member, rep(seq(this.comma, member), 0), this.ws), 0, 1),
      lit('}'),
    );
    const array = seq(
      lit('['),
      this.ws,
      rep(seq(value, rep(seq(this.comma, value), 0), this.ws), 0, 1),
      lit(']'),
    );
    this.rules.set('value', alt(lit('null'), lit('true'), lit('false'), ANY_NUMBER, str, object, array));
    return value;
  }

  enter(path: string): void {
    if (++this.depth > 200) {
      throw new CodecallError(
        'GRAMMAR_INVALID_SCHEMA',
        `the schema nests or refers deeper than 200 levels at ${path}`,
        {
          details: { path },
        },
      );
    }
  }

  leave(): void {
    this.depth--;
  }
}
