/**
 * Objects: declared properties in declared order (each optional one may be left out), then the additional ones.
 * An additional key is any key but the declared names (a trie over them, so "a" cannot come back as an extra and
 * dodge its own schema), or a key matching a patternProperties pattern with that pattern's schema.
 */
import { charRanges, MAX_CODE_POINT, negate, single } from './char-class.ts';
import type { CompileContext } from './compile-context.ts';
import { alt, chars, EMPTY, lit, NOTHING, opt, ref, rep, seq } from './ir.ts';
import type { Expr } from './ir.ts';
import { encodeChars } from './json-string.ts';
import { parseRegex, RegexUnsupported } from './regex.ts';
import { FORBIDDEN } from './keywords.ts';
import { canonical } from './merge.ts';
import { pointerJoin } from './report.ts';

type Schema = Record<string, unknown>;
const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Characters of any key except the given names: a trie whose every off-path step leaves for "anything". */
function keyExcept(ctx: CompileContext, names: string[]): Expr {
  const any = rep(ctx.stringChar, 0);
  if (names.length === 0) return any;
  const memo = JSON.stringify(names);
  const known = ctx.keyRules.get(memo);
  if (known !== undefined) return ref(known);
  // With plain names (printable ASCII but quote and backslash) no escape but \/ can spell a name's character:
  // every trie node's "any other character" is its few ASCII ranges plus one shared rule for the rest.
  const plain = names.every((name) => /^[\x20-\x7e]*$/.test(name) && !/["\\]/.test(name));
  // Once a key has left the names it is any key: one rule, called last (a tail call), so every trie node's "any
  // other" step reaches the same frontier and a mask walks the names' trie only (ADR 0060, amended 2026-12-07).
  const tail = anyKeyTail(ctx, any);
  const rest = plain
    ? ctx.define(
        ctx.name('key_other'),
        seq(
          alt(
            encodeChars(chars(charRanges([[0x80, MAX_CODE_POINT]]))),
            encodeChars(
              chars(
                charRanges([
                  [0, 0x1f],
                  [0x22, 0x22],
                  [0x5c, 0x5c],
                ]),
              ),
            ),
          ),
          tail,
        ),
      )
    : undefined;
  /** A character that is no name's next one here, then any characters. */
  const other = (firsts: number[]): Expr => {
    if (rest === undefined)
      return seq(encodeChars(chars(negate(charRanges(firsts.map((cp) => [cp, cp]))))), tail);
    const ranges: number[] = [];
    for (let cp = 0x20; cp <= 0x7e; cp++) {
      if (cp === 0x22 || cp === 0x5c || firsts.includes(cp)) continue;
      if (ranges.length > 0 && ranges[ranges.length - 1] === cp - 1) ranges[ranges.length - 1] = cp;
      else ranges.push(cp, cp);
    }
    // "/" written as \/ is the same character: "other" only where "/" is not a name's next character.
    return firsts.includes(0x2f)
      ? alt(seq(chars(ranges), tail), rest)
      : alt(seq(alt(chars(ranges), lit('\\/')), tail), rest);
  };
  const build = (words: string[][]): Expr => {
    const byFirst = new Map<number, string[][]>();
    let endsHere = false;
    for (const word of words) {
      if (word.length === 0) endsHere = true;
      else {
        const cp = word[0]!.codePointAt(0)!;
        byFirst.set(cp, [...(byFirst.get(cp) ?? []), word.slice(1)]);
      }
    }
    const firsts = [...byFirst.keys()];
    const options: Expr[] = [];
    if (!endsHere) options.push(EMPTY);
    options.push(other(firsts));
    for (const [cp, rest] of byFirst) options.push(seq(encodeChars(chars(single(cp))), build(rest)));
    return alt(...options);
  };
  const name = ctx.name('key');
  ctx.keyRules.set(memo, name);
  return ctx.define(name, build(names.map((n) => Array.from(n))));
}

/** The rule of a key's characters after it has left the declared names (one per grammar). */
function anyKeyTail(ctx: CompileContext, any: Expr): Expr {
  const known = ctx.keyRules.get('');
  if (known !== undefined) return ref(known);
  const name = ctx.name('key_any');
  ctx.keyRules.set('', name);
  return ctx.define(name, any);
}

function member(ctx: CompileContext, key: Expr, value: Expr): Expr {
  return seq(key, ctx.ws, lit(':'), ctx.ws, value);
}

interface Declared {
  readonly item: Expr;
  readonly required: boolean;
}

/** Members: the declared ones in order (optional ones may be missing), then `extra` repeated. */
function members(ctx: CompileContext, declared: Declared[], extra: Expr | undefined, hint: string): Expr {
  const comma = ctx.comma;
  const extras = extra === undefined ? EMPTY : rep(seq(comma, extra), 0);
  // after[i]: what may follow once something was written, from property i on (one rule each when long).
  const after: Expr[] = new Array<Expr>(declared.length + 1);
  after[declared.length] = extras;
  for (let i = declared.length - 1; i >= 0; i--) {
    const { item, required } = declared[i]!;
    const body = required ? seq(comma, item, after[i + 1]!) : seq(opt(seq(comma, item)), after[i + 1]!);
    after[i] = declared.length > 4 && i > 0 ? ctx.define(ctx.name(`${hint}_after${i}`), body) : body;
  }
  // first[i]: nothing written yet, from property i on; never empty (the caller makes the whole optional).
  let first: Expr = extra === undefined ? NOTHING : seq(extra, extras);
  for (let i = declared.length - 1; i >= 0; i--) {
    const { item, required } = declared[i]!;
    first = required ? seq(item, after[i + 1]!) : alt(seq(item, after[i + 1]!), first);
  }
  return first;
}

/** A pattern every key matches (additionalProperties never applies beside it). */
const UNIVERSAL = new Set(['', '.*', '^.*', '.*$']);

export function compileObject(ctx: CompileContext, schema: Schema, path: string): Expr {
  const props = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const additional = schema.additionalProperties ?? true;
  const patterns = isObject(schema.patternProperties) ? Object.entries(schema.patternProperties) : [];
  const universal = patterns.some(([p]) => UNIVERSAL.has(p));
  const forbidden = new Set(Array.isArray(schema[FORBIDDEN]) ? (schema[FORBIDDEN] as string[]) : []);
  if ([...required].some((name) => forbidden.has(name))) return NOTHING;
  for (const name of forbidden) {
    if (patterns.some(([p]) => safeTest(p, name))) ctx.report('not', path, `a pattern key may be ${name}`);
  }
  const names = Object.keys(props).filter((name) => !forbidden.has(name));
  // A required name not declared is an additional (or pattern) property that must be there.
  for (const name of required) if (!Object.hasOwn(props, name)) names.push(name);
  // A named property's value meets its own schema and that of every pattern its name matches; additionalProperties
  // only where there is neither.
  const valueFor = (name: string): Expr => {
    const own = Object.hasOwn(props, name) ? [props[name]] : [];
    const matching = patterns.filter(([p]) => safeTest(p, name)).map(([, sub]) => sub);
    const all = [...new Map([...own, ...matching].map((sub) => [canonical(sub), sub])).values()];
    const at = pointerJoin(path, own.length > 0 ? 'properties' : 'additionalProperties', name);
    if (all.length === 0) return ctx.compile(additional, at);
    if (all.length === 1) return ctx.compile(all[0], at);
    // Merging through a $ref could unfold a recursive schema forever: such a pair is reported instead.
    if (all.some((sub) => isObject(sub) && typeof sub.$ref === 'string')) {
      ctx.report('patternProperties', at, `${name} also matches a pattern whose schema is not merged`);
      return ctx.compile(all[0], at);
    }
    return ctx.compile({ allOf: all }, at);
  };
  const declared: Declared[] = names.map((name) => ({
    item: ctx.share(member(ctx, lit(JSON.stringify(name)), valueFor(name)), name),
    required: required.has(name),
  }));
  const extraItems: Expr[] = [];
  if (patterns.length > 1) {
    ctx.report('patternProperties', path, 'a key matching two patterns gets either schema');
  }
  const exceptNamed = (): Expr => seq(lit('"'), keyExcept(ctx, [...names, ...forbidden]), lit('"'));
  for (const [p, patternSchema] of patterns) {
    const at = pointerJoin(path, 'patternProperties', p);
    let key: Expr;
    if (UNIVERSAL.has(p)) key = exceptNamed();
    else {
      try {
        key = seq(lit('"'), encodeChars(parseRegex(p), ctx.stringChar), lit('"'));
      } catch (error) {
        if (!(error instanceof RegexUnsupported)) throw error;
        ctx.report('patternProperties', at, `regex not supported: ${error.message}`);
        continue;
      }
      if ([...names, ...forbidden].some((name) => safeTest(p, name))) {
        ctx.report('patternProperties', at, 'the pattern matches a declared name');
      }
    }
    const value = ctx.compile(patternSchema, at);
    if (value !== NOTHING) extraItems.push(member(ctx, key, value));
  }
  if (additional !== false && !universal) {
    if (patterns.length > 0 && additional !== true) {
      ctx.report('additionalProperties', path, 'a key matching a pattern may take the additional schema');
    } else if (patterns.length > 0) {
      ctx.report('patternProperties', path, 'a key matching a pattern may take any value');
    }
    const value = ctx.compile(additional, pointerJoin(path, 'additionalProperties'));
    if (value !== NOTHING) extraItems.push(member(ctx, exceptNamed(), value));
  }
  const extra = extraItems.length === 0 ? undefined : ctx.share(alt(...extraItems), 'extra');
  const body = members(ctx, declared, extra, ctx.name(path.split('/').pop() ?? 'object'));
  const ws = ctx.ws;
  const anyRequired = declared.some((d) => d.required);
  return seq(lit('{'), ws, anyRequired ? seq(body, ws) : opt(seq(body, ws)), lit('}'));
}

function safeTest(pattern: string, name: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(name);
  } catch {
    return false;
  }
}
