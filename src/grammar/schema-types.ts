/** Strings (pattern, format, lengths) and numbers (bounds) as grammar expressions. */
import type { CompileContext } from './compile-context.ts';
import { formatPattern } from './formats.ts';
import { lit, NOTHING, ref, rep, seq } from './ir.ts';
import type { Expr } from './ir.ts';
import { encodeChars } from './json-string.ts';
import { ANY_NUMBER, integerRange, numberRange } from './numbers.ts';
import type { Bound } from './numbers.ts';
import { parseRegex, RegexUnsupported } from './regex.ts';

type Schema = Record<string, unknown>;

/** Most characters a length bound may ask for before it is reported instead of built. */
const MAX_LENGTH_BOUND = 10_000;

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;
}

function regexContent(ctx: CompileContext, source: string, keyword: string, path: string): Expr | undefined {
  // One rule per distinct regex: a format used in fifty places is built once.
  const known = ctx.regexRules.get(source);
  if (known !== undefined) return ref(known);
  try {
    const body = encodeChars(parseRegex(source), ctx.stringChar);
    const name = ctx.name(keyword === 'format' ? (source.length > 30 ? 'format' : source) : 'pattern');
    ctx.regexRules.set(source, name);
    return ctx.define(name, body);
  } catch (error) {
    if (!(error instanceof RegexUnsupported)) throw error;
    ctx.report(keyword, path, `regex not supported: ${error.message}`);
    return undefined;
  }
}

export function compileString(ctx: CompileContext, schema: Schema, path: string): Expr {
  let content: Expr | undefined;
  if (typeof schema.pattern === 'string') content = regexContent(ctx, schema.pattern, 'pattern', path);
  if (typeof schema.format === 'string') {
    const pattern = formatPattern(schema.format);
    if (pattern === undefined) ctx.report('format', path, `unknown format ${schema.format}`);
    else if (content !== undefined) ctx.report('format', path, 'a format besides a pattern');
    else content = regexContent(ctx, pattern, 'format', path);
  }
  let min = count(schema.minLength) ?? 0;
  let max = count(schema.maxLength) ?? Infinity;
  if (content !== undefined) {
    if (min > 0 || max !== Infinity)
      ctx.report(min > 0 ? 'minLength' : 'maxLength', path, 'a length besides a pattern or format');
    return seq(lit('"'), content, lit('"'));
  }
  if (min > MAX_LENGTH_BOUND) {
    ctx.report('minLength', path, `over ${MAX_LENGTH_BOUND}`);
    min = 0;
  }
  if (max !== Infinity && max > MAX_LENGTH_BOUND) {
    ctx.report('maxLength', path, `over ${MAX_LENGTH_BOUND}`);
    max = Infinity;
  }
  return seq(lit('"'), rep(ctx.stringChar, min, max), lit('"'));
}

function bound(schema: Schema, key: 'minimum' | 'maximum', integer: boolean): Bound | null | undefined {
  const exclusiveKey = key === 'minimum' ? 'exclusiveMinimum' : 'exclusiveMaximum';
  const candidates: { value: number; exclusive: boolean }[] = [];
  if (typeof schema[key] === 'number') candidates.push({ value: schema[key], exclusive: false });
  const ex = schema[exclusiveKey];
  // draft-04: exclusiveMinimum: true makes minimum exclusive.
  if (ex === true && candidates.length > 0) candidates[0]!.exclusive = true;
  if (typeof ex === 'number') candidates.push({ value: ex, exclusive: true });
  if (candidates.length === 0) return null;
  const tighter = candidates.reduce((a, b) => {
    const better = key === 'minimum' ? b.value > a.value : b.value < a.value;
    return better || (b.value === a.value && b.exclusive) ? b : a;
  });
  if (!Number.isFinite(tighter.value) || Math.abs(tighter.value) > 1e300) return undefined;
  if (integer) {
    // Integers: x > 2.5 is x >= 3, x > 2 is x >= 3.
    const v = tighter.value;
    let n: number;
    if (key === 'minimum') n = Number.isInteger(v) ? (tighter.exclusive ? v + 1 : v) : Math.ceil(v);
    else n = Number.isInteger(v) ? (tighter.exclusive ? v - 1 : v) : Math.floor(v);
    return { value: BigInt(n), exclusive: false };
  }
  if (!Number.isInteger(tighter.value)) return undefined;
  return { value: BigInt(tighter.value), exclusive: tighter.exclusive };
}

export function compileInteger(ctx: CompileContext, schema: Schema, path: string): Expr {
  const lo = bound(schema, 'minimum', true);
  const hi = bound(schema, 'maximum', true);
  if (lo === undefined || hi === undefined) {
    ctx.report(lo === undefined ? 'minimum' : 'maximum', path, 'not a finite bound');
    return integerRange(null, null);
  }
  return integerRange(lo?.value ?? null, hi?.value ?? null);
}

export function compileNumber(ctx: CompileContext, schema: Schema, path: string, _integer: boolean): Expr {
  const lo = bound(schema, 'minimum', false);
  const hi = bound(schema, 'maximum', false);
  if (lo === null && hi === null) return ANY_NUMBER;
  if (lo === undefined || hi === undefined) {
    ctx.report(lo === undefined ? 'minimum' : 'maximum', path, 'a bound that is not an integer');
    return ANY_NUMBER;
  }
  const range = numberRange(lo, hi);
  return range === NOTHING ? NOTHING : range;
}
